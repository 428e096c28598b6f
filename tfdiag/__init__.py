"""tfdiag: why is this TensorFlow/Keras call slow, and what should I call instead?

``import tfdiag`` imports neither TensorFlow nor NumPy: the probes run the user's
call, and everything else (classification, attribution, advice, rendering,
``explain``) works on recorded data.

The package is a stack of layers, each importing only the ones below it
(docs/how-it-works.md): ``records`` → ``analysis`` → ``advise`` → ``render`` →
``results`` → ``capture`` / ``measure`` / ``script`` → ``keras`` / ``frontends``.
"""

from __future__ import annotations

from typing import Any

from tfdiag import keras
from tfdiag.capture.runner import Interrupted, profile
from tfdiag.capture.trace_limit import TooManyTraces, max_traces
from tfdiag.measure.run import compare
from tfdiag.measure.verify.accelerate import Accelerated, accelerate
from tfdiag.records.catalog import Category, Rule, load_rules
from tfdiag.records.catalog.finding_rules import FindingRule, load_finding_rules
from tfdiag.records.errors import InputError, ProfilerBusyError, TfdiagError
from tfdiag.records.version import __version__
from tfdiag.results.diff import diff
from tfdiag.results.job import JobResult
from tfdiag.results.load import load_report, load_result
from tfdiag.results.merge import merge
from tfdiag.results.report import Report

__all__ = [
    "Accelerated",
    "Category",
    "FindingRule",
    "InputError",
    "JobResult",
    "Interrupted",
    "ProfilerBusyError",
    "Report",
    "Rule",
    "TfdiagError",
    "TooManyTraces",
    "__version__",
    "accelerate",
    "compare",
    "diff",
    "keras",
    "load_finding_rules",
    "load_ipython_extension",
    "load_report",
    "load_result",
    "load_rules",
    "max_traces",
    "merge",
    "profile",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext tfdiag``: registers the ``%tfdiag`` and ``%%tfdiag`` magics."""
    from tfdiag.frontends.magics import register

    register(ipython)
