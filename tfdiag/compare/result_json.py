"""A comparison as JSON and back: raw records plus derived views out, raw records in.

Schema (``"schema_version": 1, "kind": "compare"``): ``methods`` (each with ``name``,
``median_s``, ``iqr_s``, ``ok``, its error or mismatch, and the raw ``times_s``),
``recommended`` (``method``, ``speedup_vs_baseline``), ``recommendations`` (one per
kind), ``advice`` (``do``/``dont``). See docs/compare.md.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from tfdiag import __version__
from tfdiag.compare.result import CompareResult, MethodResult, Recommendation, Settings
from tfdiag.errors import InputError
from tfdiag.report import Environment


def result_to_json(result: CompareResult) -> dict[str, Any]:
    do, dont = result.advice()
    return {
        "schema_version": result.schema_version,
        "kind": "compare",
        "tool": f"tfdiag {__version__}",
        "created": result.created,
        "model": result.model,
        "flavour": result.flavour,
        "data": dict(result.data),
        "settings": asdict(result.settings),
        "baselines": dict(result.baselines),
        "environment": {**asdict(result.environment), "devices": list(result.environment.devices)},
        "notes": list(result.notes),
        "methods": [_method_json(result, m) for m in result.methods],
        "recommended": _recommendation_json(result.recommended),
        "recommendations": [_recommendation_json(r) for r in result.recommendations],
        "advice": {"do": list(do), "dont": list(dont)},
    }


def _method_json(result: CompareResult, m: MethodResult) -> dict[str, Any]:
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


def result_from_json(doc: dict[str, Any]) -> CompareResult:
    """Rebuild a CompareResult from its JSON; derived fields are ignored and recomputed."""
    if doc.get("kind") != "compare":
        raise InputError("not a compare result")
    methods = doc["methods"]
    if not isinstance(methods, list):
        raise InputError("not a valid compare result (methods is not a list)")
    settings = dict(doc.get("settings", {}))
    known = Settings.__dataclass_fields__
    return CompareResult(
        methods=tuple(_method_from_json(m) for m in methods),
        model=str(doc.get("model", "")),
        flavour=str(doc.get("flavour", "unknown")),
        data=tuple((str(k), str(v)) for k, v in dict(doc.get("data", {})).items()),
        settings=Settings(**{k: v for k, v in settings.items() if k in known}),
        baselines=tuple((str(k), str(v)) for k, v in dict(doc.get("baselines", {})).items()),
        environment=Environment.from_json(doc.get("environment", {})),
        notes=tuple(str(n) for n in doc.get("notes", ())),
        created=str(doc.get("created", "")),
    )


def _method_from_json(m: dict[str, Any]) -> MethodResult:
    times = tuple(float(t) for t in m.get("times_s", ()))
    if any(not t > 0 for t in times):
        raise InputError(f"not a valid compare result (method {m.get('name')!r} has a time ≤ 0)")
    return MethodResult(
        name=str(m["name"]),
        method=str(m.get("method", m["name"])),
        call=str(m.get("call", m["name"])),
        kind=str(m["kind"]),
        flavour=str(m.get("flavour", "unknown")),
        eager=bool(m.get("eager", False)),
        number=int(m.get("number", 1)),
        times_s=times,
        warmup_s=tuple(float(t) for t in m.get("warmup_s", ())),
        error=_opt_str(m.get("error")),
        mismatch=_opt_str(m.get("mismatch")),
        max_abs_diff=_opt_float(m.get("max_abs_diff")),
        loss_before=_opt_float(m.get("loss_before")),
        loss_after=_opt_float(m.get("loss_after")),
    )


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)
