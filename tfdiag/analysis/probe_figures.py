"""The figures the probes' records give, derived once per diagnosis: each pass's slowdown,
the TF profiler's op-level figures, its graph builds against the call counts, and the
sampled breakdown's shares.

Views and documents read them off the diagnosis (:class:`~tfdiag.advise.diagnosis.Diagnosis`),
so the console, the JSON and the HTML show the same numbers, computed once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tfdiag.analysis.oplevel import (
    OpFigures,
    RetracingCheck,
    op_figures,
    retracing_check,
    slowdowns,
)
from tfdiag.analysis.pipeline import Analysis
from tfdiag.analysis.sampled import sampled_shares
from tfdiag.records.catalog import Category
from tfdiag.records.report import RunRecord


@dataclass(frozen=True)
class ProbeFigures:
    """What a run's probes measured, as figures: ``ops`` when the TF profiler traced steps,
    ``retracing`` when its trace counted graph builds, ``sampled_shares`` (share of sampled
    time per category) when a sample fell inside the call."""

    slowdowns: tuple[tuple[str, float], ...]
    ops: OpFigures | None
    retracing: RetracingCheck | None
    sampled_shares: Mapping[Category, float] | None


def probe_figures(record: RunRecord, analysis: Analysis) -> ProbeFigures | None:
    """The figures of ``record``'s probes; None when no probe ran."""
    if record.probes is None:
        return None
    tf = record.probes.tf_profile
    return ProbeFigures(
        slowdowns=slowdowns(record),
        ops=op_figures(tf) if tf is not None else None,
        retracing=retracing_check(record, analysis),
        sampled_shares=sampled_shares(record),
    )
