"""Stage 4: turn the attribution into findings, each with evidence and a concrete fix.

The findings are a table (:data:`FINDINGS`): an id, a title, and a detector that
reads the analysis and returns this run's numbers, or ``None`` when the finding
does not apply. Findings are ranked by *impact*: the share of steady-state
(non-build) time the fix can remove.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tfdiag.advise.detectors import (
    build_dominated,
    callback_overhead,
    compute_bound,
    conversion_overhead,
    eager_execution,
    per_call_input_pipeline,
    per_iteration_tracing,
)
from tfdiag.advise.finding import Detection, Finding, FindingSpec
from tfdiag.timeline_advice import Advice, drift_advice, spikes_advice, warmup_advice

__all__ = ["FINDINGS", "Detection", "Finding", "FindingSpec", "advise"]

if TYPE_CHECKING:
    from tfdiag.analysis import Analysis
    from tfdiag.report import Report, Timing


def _timeline(
    read: Callable[[Timing], Advice | None],
) -> Callable[[Report, Analysis], Detection | None]:
    """A detector over the run's iteration times (:mod:`tfdiag.timeline`)."""

    def detect(report: Report, analysis: Analysis) -> Detection | None:
        found = read(report.timing)
        return None if found is None else Detection(*found)

    return detect


#: The finding table. Order breaks ties in impact.
FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "per-call-input-pipeline",
        "A data adapter / tf.data pipeline is built on every call",
        per_call_input_pipeline,
    ),
    FindingSpec(
        "per-iteration-tracing", "Graphs are traced on every iteration", per_iteration_tracing
    ),
    FindingSpec("eager-execution", "Ops run eagerly, one Python dispatch each", eager_execution),
    FindingSpec("build-dominated", "One-time build cost dominates", build_dominated),
    FindingSpec(
        "conversion-overhead",
        "Converting data to and from tensors costs time",
        conversion_overhead,
    ),
    FindingSpec("callback-overhead", "Callbacks and the progress bar cost time", callback_overhead),
    FindingSpec("compute-bound", "Compute-bound: the time is in op execution", compute_bound),
    FindingSpec("warmup", "Warm-up: the first iterations are slower", _timeline(warmup_advice)),
    FindingSpec("spikes", "Spikes: some iterations take far longer", _timeline(spikes_advice)),
    FindingSpec("drift", "Drift: iteration times trend over the run", _timeline(drift_advice)),
)


def _severity(impact: float) -> str:
    return "high" if impact >= 0.3 else "medium" if impact >= 0.1 else "low"


def advise(report: Report, analysis: Analysis) -> tuple[Finding, ...]:
    """Run every detector; findings ranked by impact, highest first."""
    found = []
    for order, spec in enumerate(FINDINGS):
        d = spec.detect(report, analysis)
        if d is not None:
            impact = round(min(max(d.impact, 0.0), 1.0), 4)
            found.append(
                (
                    -impact,
                    order,
                    Finding(spec.id, spec.title, _severity(impact), impact, d.evidence, d.fix),
                )
            )
    found.sort(key=lambda t: (t[0], t[1]))
    return tuple(f for _, _, f in found)
