"""``profile(..., verify=True)``: each finding's mechanical fixes built on the profiled call,
measured against it with compare's engine, checked, and attached to the finding.

:data:`~tfdiag.measure.verify.table.FIXES` is the table (finding id → the variants tried);
:func:`verify_report` runs it on a report and returns the report with its
``verifications`` records. ``tfdiag.accelerate`` (:mod:`.accelerate`) builds a drop-in
predictor from the same measurements. Nothing here imports TensorFlow until a call is re-run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tfdiag.measure.budget import DEFAULT_BUDGET_S, check_budget
from tfdiag.measure.verify.call import Call
from tfdiag.measure.verify.run import VerifySettings, verify_findings
from tfdiag.records.clock import Clock
from tfdiag.render.progress import progress_bar
from tfdiag.results.report import Report

__all__ = ["DEFAULT_BUDGET_S", "VerifySettings", "check_budget", "verify_report"]


def verify_report(
    report: Report,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    settings: VerifySettings | None = None,
    clock: Clock = time.perf_counter,
    progress: bool = True,
) -> Report:
    """The report with each finding's verification (``report.verifications``) added.

    ``progress``: the transient progress bar of :mod:`tfdiag.render.progress` (a terminal or a
    notebook only; ``TFDIAG_PROGRESS=0`` turns it off).
    """
    settings = settings or VerifySettings()
    call = Call(fn, args, dict(kwargs), facts=dict(report.call.facts))
    findings = report.findings
    start = clock()
    with progress_bar("tfdiag verify", enabled=progress) as on_step:
        found = verify_findings(
            call,
            findings,
            settings=settings,
            call_s=report.timing.median_s,
            clock=clock,
            on_step=on_step,
        )
    budget = [v.finding for v in found if (v.skipped or "").startswith("budget")]
    measured = sum(1 for v in found if v.variants)
    notes = list(report.notes)
    notes.append(
        f"verify: {measured} of {len(found)} finding(s) measured against the call as written in "
        f"{clock() - start:.1f} s (verify_s={settings.budget_s:g} s)"
    )
    if budget:
        notes.append(
            f"verify: not measured for the verify_s={settings.budget_s:g} s budget: "
            + ", ".join(budget)
        )
    return replace(report, verifications=found, notes=tuple(notes))
