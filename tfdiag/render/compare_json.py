"""A comparison as JSON: raw records plus the derived views (read back by
:func:`tfdiag.records.compare.compare_from_json`).

Schema (``"schema_version": 1, "kind": "compare"``): ``methods`` (each with ``name``,
``median_s``, ``iqr_s``, ``ok``, its error or mismatch, and the raw ``times_s``),
``recommended`` (``method``, ``speedup_vs_baseline``), ``recommendations`` (one per
kind), ``advice`` (``do``/``dont``). See docs/compare.md.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from tfdiag.records.compare import CompareRecord, MethodResult, Recommendation
from tfdiag.render.document import header


def result_to_json(result: CompareRecord) -> dict[str, Any]:
    do, dont = result.advice()
    return {
        **header(result),
        "model": result.model,
        "flavour": result.flavour,
        "data": dict(result.data),
        "settings": asdict(result.settings),
        "baselines": dict(result.baselines),
        "environment": result.environment.to_json(),
        "notes": list(result.notes),
        "methods": [_method_json(result, m) for m in result.methods],
        "recommended": _recommendation_json(result.recommended),
        "recommendations": [_recommendation_json(r) for r in result.recommendations],
        "advice": {"do": list(do), "dont": list(dont)},
    }


def _method_json(result: CompareRecord, m: MethodResult) -> dict[str, Any]:
    return {
        "name": m.name,
        "method": m.method,
        "call": m.call,
        "kind": m.kind,
        "flavour": m.flavour,
        "eager": m.eager,
        "ok": m.ok,
        "median_s": m.median_s,
        "iqr_s": m.iqr_s,
        "noisy": m.noisy,
        "first_call_s": m.first_call_s,
        "ratio_to_fastest": result.ratio_to_fastest(m),
        "speedup_vs_baseline": result.speedup_vs_baseline(m),
        "percent_vs_baseline": result.percent_vs_baseline(m),
        "error": m.error,
        "mismatch": m.mismatch,
        "max_abs_diff": m.max_abs_diff,
        "loss_before": _finite(m.loss_before),
        "loss_after": _finite(m.loss_after),
        "number": m.number,
        "times_s": list(m.times_s),
        "warmup_s": list(m.warmup_s),
    }


def _recommendation_json(rec: Recommendation | None) -> dict[str, Any] | None:
    if rec is None:
        return None
    return {
        "kind": rec.kind,
        "method": rec.method.name,
        "call": rec.method.call,
        "median_s": rec.method.median_s,
        "baseline": rec.baseline.name if rec.baseline is not None else None,
        "speedup_vs_baseline": rec.speedup_vs_baseline,
    }


def _finite(value: float | None) -> float | None:
    """JSON has no NaN or infinity; a diverged loss is written as null (its mismatch says why)."""
    return value if value is not None and math.isfinite(value) else None
