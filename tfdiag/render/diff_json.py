"""A diff as JSON: ``ratio``, ``verdict``, each run's times, the findings ``resolved``,
``new`` and ``persisting`` (each with its state before and after), and ``warnings``."""

from __future__ import annotations

from typing import Any

from tfdiag.advise.diff import DiffRecord, Side
from tfdiag.advise.script_diff import ScriptDiffRecord
from tfdiag.records.clock import now_iso
from tfdiag.records.version import __version__
from tfdiag.render.diff_changes import change_json


def _side(side: Side) -> dict[str, Any]:
    s = side.spread
    return {
        "name": side.name,
        "label": side.label,
        "partial": side.partial,
        "iterations": s.n,
        "median_s": s.median_s,
        "q1_s": s.q1_s,
        "q3_s": s.q3_s,
        "iqr_s": s.iqr_s,
    }


def diff_to_json(record: DiffRecord | ScriptDiffRecord) -> dict[str, Any]:
    if isinstance(record, ScriptDiffRecord):
        from tfdiag.render.script_diff import script_diff_to_json

        return script_diff_to_json(record)
    return {
        "kind": record.kind,
        "tool": f"tfdiag {__version__}",
        "created": now_iso(),
        "ratio": record.ratio,
        "verdict": record.verdict,
        "before": _side(record.before),
        "after": _side(record.after),
        "resolved": [change_json(c) for c in record.resolved],
        "new": [change_json(c) for c in record.new],
        "persisting": [change_json(c) for c in record.persisting],
        "warnings": list(record.warnings),
    }
