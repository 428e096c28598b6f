"""The check behind the pytest plugin's ``tfdiag_check``: profile a call cheaply, save its
report, and fail when a forbidden finding is present in two profiles running.

A shared CI runner preempts the call now and then; one preemption inside a short profiled
iteration can lift a small share (a conversion, a one-time cost) over its threshold. A finding
of the program is there on every profile, so a finding that fails the check is confirmed by a
second profile before the test fails: the cost of the second one is paid only on failure.

Kept apart from pytest so a benchmark (benchmarks/ci_cost.py) times exactly what a test
pays.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tfdiag.advise import Finding
from tfdiag.advise.guards import check_forbid, check_severity, forbidden, python_side_ids
from tfdiag.capture.runner import profile_call
from tfdiag.records.errors import TfdiagError
from tfdiag.records.text import clean
from tfdiag.records.units import fmt_pct0, fmt_s
from tfdiag.results.report import Report

#: The plugin's defaults: a unit test's budget, no TF profiler.
DEFAULT_ITERATIONS = 10
DEFAULT_SEVERITY = "medium"


class ForbiddenFinding(AssertionError):
    """``tfdiag_check`` found a finding the test forbids.

    Attributes:
        report: the run's report (saved at ``path`` when it could be).
        findings: the forbidden findings present, in report order.
        path: the saved report's ``.tfdiag.json``, or None.
    """

    def __init__(
        self, message: str, report: Report, findings: tuple[Finding, ...], path: Path | None
    ) -> None:
        super().__init__(message)
        self.report = report
        self.findings = findings
        self.path = path


class SaveWarning(UserWarning):
    """The report of a ``tfdiag_check`` could not be saved (the check itself still ran)."""


def describe(f: Finding) -> list[str]:
    """A finding as the lines of a failure message: id, title, evidence, fix."""
    lines = [f"[{f.severity}] {f.id}: {f.title} (impact {fmt_pct0(f.impact)} of each iteration)"]
    lines += [f"  evidence: {e}" for e in f.evidence]
    lines.append(f"  fix: {f.fix}")
    return lines


def failure_message(
    report: Report, found: tuple[Finding, ...], path: Path | None, save_error: str | None
) -> str:
    timing = report.timing
    lines = [
        f"tfdiag_check: {len(found)} forbidden finding(s) in {report.call.label} "
        f"({len(timing.iteration_s)} timed iterations, median {fmt_s(timing.median_s)}):"
    ]
    for f in found:
        lines += describe(f)
    if path is not None:
        lines.append(f"report: {path} (python -m tfdiag explain {path})")
    elif save_error is not None:
        lines.append(f"report not saved: {save_error}")
    return clean("\n".join(lines))


def _save(report: Report, path: Path | None) -> tuple[Path | None, str | None]:
    if path is None:
        return None, None
    try:
        return report.save(path, overwrite=True)[0], None
    except (OSError, TfdiagError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def check_call(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    forbid: Iterable[str] | None = None,
    severity: str = DEFAULT_SEVERITY,
    tf_profiler: bool = False,
    save: Path | None = None,
) -> Report:
    """Profile ``fn(*args, **kwargs)`` as ``tfdiag.profile`` does (no progress bar, the TF
    profiler only when asked), save the report at ``save`` (``<stem>.tfdiag.json`` and
    ``.prof``, replacing an older one), and return it.

    Args:
        forbid: finding ids that fail the check; None: :func:`python_side_ids`.
        severity: the lowest severity that fails (``low``, ``medium``, ``high``).

    A forbidden finding is confirmed by a second profile (the module's docstring): the check
    fails on the findings present in both, with the second profile's report and figures.

    Raises:
        ForbiddenFinding: a finding in ``forbid`` at ``severity`` or above is present in two
            profiles running.
        InputError: an unknown finding id or severity, or what ``profile`` refuses.
    """
    ids = python_side_ids() if forbid is None else check_forbid(forbid)
    floor = check_severity(severity)
    report = profile_call(fn, args, kwargs, iterations=iterations, tf_profiler=tf_profiler)
    if forbidden(report.findings, ids, floor):
        first = {f.id for f in forbidden(report.findings, ids, floor)}
        report = profile_call(fn, args, kwargs, iterations=iterations, tf_profiler=tf_profiler)
        found = tuple(f for f in forbidden(report.findings, ids, floor) if f.id in first)
    else:
        found = ()
    path, error = _save(report, save)
    if found:
        raise ForbiddenFinding(failure_message(report, found, path, error), report, found, path)
    if error is not None:
        warnings.warn(f"tfdiag_check: report not saved: {error}", SaveWarning, stacklevel=2)
    return report
