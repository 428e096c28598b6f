"""tfdiag: why is this TensorFlow/Keras call slow, and what should I call instead?

``import tfdiag`` imports neither TensorFlow nor NumPy: the probes run the user's
call, and everything else (classification, attribution, advice, rendering,
``explain``) works on recorded data.

The package is a stack of layers, each importing only the ones below it
(docs/how-it-works.md): ``records`` → ``analysis`` → ``advise`` → ``render`` →
``results`` → ``capture`` / ``measure`` / ``script`` → ``keras`` / ``frontends``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from tfdiag.records.version import __version__

if TYPE_CHECKING:
    from tfdiag import keras
    from tfdiag.capture.runner import Interrupted
    from tfdiag.capture.trace_limit import TooManyTraces, max_traces
    from tfdiag.frontends.api import profile
    from tfdiag.measure.recheck import diff
    from tfdiag.measure.run import compare
    from tfdiag.measure.verify.accelerate import Accelerated, accelerate
    from tfdiag.records.catalog import Category, Rule, load_rules
    from tfdiag.records.catalog.finding_rules import FindingRule, load_finding_rules
    from tfdiag.records.errors import InputError, ProfilerBusyError, TfdiagError
    from tfdiag.results.job import JobResult
    from tfdiag.results.load import load_report, load_result
    from tfdiag.results.merge import merge
    from tfdiag.results.report import Report

#: Where each public name lives. ``import tfdiag`` loads none of them: a name's module is
#: imported on first use (module ``__getattr__``), so a script that only calls ``profile()``
#: never loads the renderers, ``compare`` or ``merge``.
_WHERE = {
    "keras": "tfdiag.keras",
    "Interrupted": "tfdiag.capture.runner",
    "profile": "tfdiag.frontends.api",
    "TooManyTraces": "tfdiag.capture.trace_limit",
    "max_traces": "tfdiag.capture.trace_limit",
    "compare": "tfdiag.measure.run",
    "Accelerated": "tfdiag.measure.verify.accelerate",
    "accelerate": "tfdiag.measure.verify.accelerate",
    "Category": "tfdiag.records.catalog",
    "Rule": "tfdiag.records.catalog",
    "load_rules": "tfdiag.records.catalog",
    "FindingRule": "tfdiag.records.catalog.finding_rules",
    "load_finding_rules": "tfdiag.records.catalog.finding_rules",
    "InputError": "tfdiag.records.errors",
    "ProfilerBusyError": "tfdiag.records.errors",
    "TfdiagError": "tfdiag.records.errors",
    "diff": "tfdiag.measure.recheck",
    "JobResult": "tfdiag.results.job",
    "load_report": "tfdiag.results.load",
    "load_result": "tfdiag.results.load",
    "merge": "tfdiag.results.merge",
    "Report": "tfdiag.results.report",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'tfdiag' has no attribute {name!r}")
    module = import_module(where)
    value = module if where == f"tfdiag.{name}" else getattr(module, name)
    globals()[name] = value  # the next use is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
