"""``tfdiag run script.py``: a user's whole script, Keras calls timed per call site.

:mod:`~tfdiag.script.instrument` patches the Keras methods and records every call
by the line in the user's code that made it; :mod:`~tfdiag.records.script` is the
saved result (kind ``script``). Neither imports TensorFlow until a script runs.
"""

from __future__ import annotations

from tfdiag.records.script import CallSite
from tfdiag.results.script import ScriptResult

__all__ = ["CallSite", "ScriptResult"]
