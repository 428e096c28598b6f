"""A diff of two ``tfdiag run`` results, as the console shows it and as JSON: the scripts'
wall times and verdict, each patch of BEFORE's ``tfdiag fix`` and its effect on its site in
AFTER, then the findings resolved, new and persisting."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from tfdiag.advise.script_diff import MARGIN, PatchEffect, ScriptDiffRecord, ScriptSide
from tfdiag.records.clock import now_iso
from tfdiag.records.units import fmt_of_the_time, fmt_ratio, fmt_s
from tfdiag.records.version import __version__
from tfdiag.render.diff_changes import change_json, changes_tables
from tfdiag.render.safe import labelled

_VERDICT_STYLE = {"faster": "bold green", "slower": "bold red", "same": "bold"}


def headline(record: ScriptDiffRecord) -> str:
    """``AFTER is faster: 0.25× the time of the script (one run each, beyond 1.1×)``."""
    r = fmt_of_the_time(record.ratio)
    if record.verdict == "same":
        return f"about the same: AFTER takes {r} of the script (one run each, within {MARGIN}×)"
    return f"AFTER is {record.verdict}: {r} of the script (one run each, beyond {MARGIN}×)"


def effect_line(x: PatchEffect) -> str:
    """``predict_per_batch.py:11 (predict-on-batch): 353.7 ms → 1.8 ms per call, 194×
    faster; per-call-input-pipeline resolved``."""
    p = x.patch
    if x.after_s is None:
        times = f"{fmt_s(x.before_s)} {x.scope} in BEFORE, not in AFTER"
    else:
        times = f"{fmt_s(x.before_s)} → {fmt_s(x.after_s)} {x.scope}, {fmt_ratio(x.speedup)} faster"
    state = "resolved" if x.resolved else "still found at the site"
    kind = f" ({p.kind})" if p.kind else ""
    return f"{p.site}{kind}: {times}; {p.finding} {state}"


def _side(role: str, side: ScriptSide) -> Text:
    return labelled(role, f"{side.script} ({side.name}): {fmt_s(side.wall_s)} wall, {side.status}")


def _effects(record: ScriptDiffRecord) -> list[RenderableType]:
    if not record.effects:
        return [Text("patches: none (BEFORE is no saved `tfdiag fix` result with a patch)")]
    parts: list[RenderableType] = [
        Text("Patches of BEFORE (tfdiag fix) and their effect in AFTER", style="bold")
    ]
    for x in record.effects:
        good = x.resolved and (x.speedup or 0) > 1
        parts.append(Text("  " + effect_line(x), style="green" if good else "yellow"))
        measured = x.patch.verified.figures() if x.patch.verified else "not measured"
        parts.append(Text(f"    tfdiag fix measured: {measured}", style="dim"))
    return parts


def render_script_diff(record: ScriptDiffRecord) -> RenderableType:
    lines = [
        Text(headline(record), style=_VERDICT_STYLE.get(record.verdict, "bold")),
        _side("before", record.before),
        _side("after", record.after),
    ]
    lines += [labelled("warning", (w, "yellow")) for w in record.warnings]
    parts: list[RenderableType] = [Panel(Group(*lines), title="tfdiag diff", box=box.ROUNDED)]
    parts += _effects(record)
    parts += changes_tables(
        record.resolved,
        record.new,
        record.persisting,
        "findings matched by id and line; per call: the median of the site's calls in "
        "each run; one run of each script, so no noise is measured (docs/fix.md)",
    )
    return Group(*parts)


def _effect_json(x: PatchEffect) -> dict[str, Any]:
    return {
        "finding": x.patch.finding,
        "kind": x.patch.kind or None,
        "site": x.patch.site,
        "new_site": x.patch.new_site,
        "scope": x.scope,
        "before_s": x.before_s,
        "after_s": x.after_s,
        "speedup": x.speedup,
        "resolved": x.resolved,
        "applied": x.applied,
        "verified": x.patch.verified.to_json() if x.patch.verified else None,
        "summary": effect_line(x),
    }


def script_diff_to_json(record: ScriptDiffRecord) -> dict[str, Any]:
    def side(s: ScriptSide) -> dict[str, Any]:
        return {"name": s.name, "script": s.script, "wall_s": s.wall_s, "status": s.status}

    return {
        "kind": record.kind,
        "of": "script",
        "tool": f"tfdiag {__version__}",
        "created": now_iso(),
        "ratio": record.ratio,
        "verdict": record.verdict,
        "before": side(record.before),
        "after": side(record.after),
        "patches": [_effect_json(x) for x in record.effects],
        "resolved": [change_json(c) for c in record.resolved],
        "new": [change_json(c) for c in record.new],
        "persisting": [change_json(c) for c in record.persisting],
        "warnings": list(record.warnings),
    }
