"""The report as JSON: raw records (what ``load_report`` reads) plus the derived views."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from tfdiag import __version__
from tfdiag.catalog import Category
from tfdiag.classify import CostClass
from tfdiag.oplevel import op_figures, retracing_check
from tfdiag.probe_data import probes_to_json, slowdowns
from tfdiag.sampled import sampled_shares

if TYPE_CHECKING:
    from tfdiag.report import Report

#: Culprit rows written to JSON (the full table is in ``profile``).
TOP_CULPRITS_JSON = 50
PROFILE_COLUMNS = (
    "file",
    "line",
    "name",
    "calls",
    "primitive_calls",
    "self_s",
    "cum_s",
    "callers[caller_index, calls, primitive_calls, self_s, cum_s]",
)


def report_to_json(report: Report) -> dict[str, Any]:
    a = report.analysis
    t = report.timing
    return {
        "schema_version": report.schema_version,
        "kind": "profile",
        "tool": f"tfdiag {__version__}",
        "created": report.created,
        "source": report.source,
        "partial": report.partial,
        "call": {
            "label": report.call.label,
            "target": report.call.target,
            "method": report.call.method,
            "flavour": report.call.flavour,
            "args": list(report.call.args),
            "kwargs": dict(report.call.kwargs),
        },
        "environment": {**asdict(report.environment), "devices": list(report.environment.devices)},
        "timing": {
            "iterations": t.iterations,
            "profiled_calls": t.profiled_calls,
            "first_call_s": t.first_call_s,
            "iteration_s": list(t.iteration_s),
            "profiled_iteration_s": list(t.profiled_iteration_s),
        },
        "notes": list(report.notes),
        "rules": [r.to_json() for r in report.rules],
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
        "findings": [
            {
                "id": f.id,
                "title": f.title,
                "severity": f.severity,
                "impact": f.impact,
                "evidence": list(f.evidence),
                "fix": f.fix,
            }
            for f in a.findings
        ],
        "profile": {"columns": list(PROFILE_COLUMNS), "functions": report.profile.to_rows()},
        "cold_profile": (
            None if report.cold_profile is None else {"functions": report.cold_profile.to_rows()}
        ),
        "probes": probes_to_json(report.probes),
        "probe_summary": _probe_summary(report),
    }


def _probe_summary(report: Report) -> dict[str, Any] | None:
    """Derived probe views: each pass's slowdown, op time vs wall, the sampled breakdown."""
    if report.probes is None:
        return None
    t, tf = report.timing, report.probes.tf_profile
    ops = op_figures(tf) if tf is not None else None
    shares = sampled_shares(report)
    check = retracing_check(report)
    return {
        "slowdown": dict(slowdowns(t.iteration_s, t.profiled_iteration_s, report.probes)),
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
