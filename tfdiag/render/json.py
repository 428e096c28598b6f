"""The report as JSON: raw records (what ``load_report`` reads) plus the derived views."""

from __future__ import annotations

from typing import Any

from tfdiag.advise.diagnosis import Diagnosis
from tfdiag.analysis.classify import CostClass
from tfdiag.analysis.probe_figures import ProbeFigures
from tfdiag.records.catalog import Category
from tfdiag.records.gc_pause import no_gc
from tfdiag.records.jsontext import indented_json
from tfdiag.records.report_json import run_record_to_json
from tfdiag.render.document import finding_to_json, header

#: Culprit rows written to JSON (the full table is in ``profile``).
TOP_CULPRITS_JSON = 50
#: The raw parts written before the derived views (the rest follow them).
_HEAD = (
    "created",
    "source",
    "partial",
    "call",
    "environment",
    "distribution",
    "timing",
    "notes",
    "rules",
    "finding_rules",
)


def report_to_json(d: Diagnosis, *, rows_as_tuples: bool = False) -> dict[str, Any]:
    """The raw records (what the loader reads) followed by the derived views;
    ``rows_as_tuples``: the function tables' rows as tuples (the same JSON, for a writer:
    :func:`report_json_text`)."""
    report, a = d.record, d.analysis
    t = report.timing
    raw = run_record_to_json(report, rows_as_tuples=rows_as_tuples)
    return {
        **header(report),
        **{k: raw[k] for k in _HEAD},
        "summary": {
            "total_s": a.total_s,
            "build_s": a.build_s,
            "per_iteration_s": a.per_iteration_s,
            "mixed_s": a.mixed_s,
            "steady_s": a.steady_s,
            "median_iteration_s": t.median_s,
            "iqr_iteration_s": t.iqr_s,
            "profiler_slowdown": t.profiler_slowdown,
        },
        "categories": [
            {
                "category": cat.value,
                "label": cat.label,
                "seconds": a.attribution.seconds(cat),
                "share": a.attribution.share(cat),
                "steady_share": a.steady_share(cat),
                **{
                    f"{cost.value.replace('-', '_')}_s": a.attribution.seconds(cat, cost)
                    for cost in CostClass
                },
            }
            for cat in Category
            if cat is not Category.WRAPPER and a.attribution.seconds(cat) > 0
        ],
        "culprits": [
            {
                "function": r.name,
                "category": r.category.value,
                "calls": r.calls,
                "class": r.classification.describe(),
                "cum_s": r.cum_s,
                "share_of_runtime_minus_build": r.seeds_share,
            }
            for r in a.culprits[:TOP_CULPRITS_JSON]
        ],
        "findings": [finding_to_json(f) for f in d.findings],
        "your_lines": [line.to_json() for line in a.lines],
        **{k: v for k, v in raw.items() if k not in _HEAD},
        "probe_summary": _probe_summary(d.probe_figures),
    }


def report_json_text(d: Diagnosis) -> str:
    """:func:`report_to_json` as indented JSON text, the function tables written by the fast
    encoder once their times are checked finite (:func:`~tfdiag.records.jsontext.indented_json`).

    Raises:
        ValueError: a NaN or infinite number in the report.
    """
    record = d.record
    profiles = [t for t in (record.profile, record.cold_profile) if t is not None]
    if sum(len(t.functions) for t in profiles) < FAST_TABLE_ROWS:
        return indented_json(report_to_json(d))
    if not all(t.finite() for t in profiles):
        raise ValueError("Out of range float values are not JSON compliant")
    with no_gc():
        doc = report_to_json(d, rows_as_tuples=True)
        return indented_json(doc, tables=("profile", "cold_profile"))


#: Function rows from which the tables are worth writing apart: the text of the rest of the
#: document is then copied once more (what 98 MB of notes beside a small table would feel).
FAST_TABLE_ROWS = 10_000


def _probe_summary(figures: ProbeFigures | None) -> dict[str, Any] | None:
    """Derived probe views: each pass's slowdown, op time vs wall, the sampled breakdown."""
    if figures is None:
        return None
    ops, shares, check = figures.ops, figures.sampled_shares, figures.retracing
    return {
        "slowdown": dict(figures.slowdowns),
        "op_time": None
        if ops is None
        else {
            "op_s_per_iteration": ops.op_s,
            "wall_s_per_iteration": ops.wall_s,
            "op_share": ops.share,
            "model_op_s_per_iteration": ops.compute_s,
            "model_op_share": ops.compute_share,
            "input_op_s_per_iteration": ops.input_s,
            "device_op_s_per_iteration": ops.device_s,
            "copy_s_per_iteration": ops.copy_s,
            "collective_s_per_iteration": ops.collective_s,
        },
        "sampled_shares": None if shares is None else {c.value: v for c, v in shares.items()},
        "retracing": None
        if check is None
        else {
            "graph_builds_per_step": check.trace_per_step,
            "traces_per_iteration_by_call_count": check.calls_per_iteration,
            "function": check.function,
            "agree": check.agree,
        },
    }
