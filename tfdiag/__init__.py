"""tfdiag: why is this TensorFlow/Keras call slow, and what should I call instead?

``import tfdiag`` never imports TensorFlow: the probes run the user's call, and
everything else (classification, attribution, advice, rendering, ``explain``)
works on recorded data.
"""

from __future__ import annotations

__version__ = "0.1.0"

from typing import Any

from tfdiag import keras
from tfdiag.capture.runner import profile
from tfdiag.catalog import Category, Rule, load_rules

# The function shadows the subpackage of the same name on purpose. It must be bound
# here, after the subpackage is loaded: a later ``import tfdiag.compare.x`` then leaves it.
from tfdiag.compare import compare
from tfdiag.errors import InputError, Interrupted, ProfilerBusyError, TfdiagError
from tfdiag.load import load_report
from tfdiag.report import Report

__all__ = [
    "Category",
    "InputError",
    "Interrupted",
    "ProfilerBusyError",
    "Report",
    "Rule",
    "TfdiagError",
    "__version__",
    "compare",
    "keras",
    "load_ipython_extension",
    "load_report",
    "load_rules",
    "profile",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext tfdiag``: registers the ``%tfdiag`` and ``%%tfdiag`` magics."""
    from tfdiag.magics import register

    register(ipython)
