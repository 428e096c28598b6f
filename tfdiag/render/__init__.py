"""Renderers. They only format; every number comes from the diagnosis (advise/diagnosis.py)."""
