"""Stage 5: renderers. They only format; every number comes from the analysis."""
