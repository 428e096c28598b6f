"""The public result objects: each is a record with its analysis and its output formats.

``Report`` (``tfdiag.profile``), ``CompareResult`` (``tfdiag.compare``), ``BenchResult``
(``tfdiag bench``), ``ScriptResult`` (``tfdiag run``); :mod:`~tfdiag.results.load`
reads any of them back.
"""
