"""The findings two runs share or not (resolved, new, persisting), as a console table
and as JSON: the part of every diff's view that is the same for reports and run results."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from tfdiag.advise.diff import Change
from tfdiag.advise.finding import Finding
from tfdiag.records.units import fmt_pct0


def _state(f: Finding | None) -> str:
    return "–" if f is None else f"{f.severity}, {fmt_pct0(f.impact)}"


def changes_table(title: str, changes: tuple[Change, ...]) -> RenderableType:
    if not changes:
        return Text(f"{title}: none")
    table = Table(title=f"{title} ({len(changes)})", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("finding", overflow="fold")
    table.add_column("title", overflow="fold")
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")
    for c in changes:
        table.add_row(c.id, c.title, _state(c.before), _state(c.after))
    return table


def change_json(c: Change) -> dict[str, Any]:
    def state(f: Any) -> dict[str, Any] | None:
        if f is None:
            return None
        return {"severity": f.severity, "impact": f.impact, "evidence": list(f.evidence)}

    doc = {"id": c.id, "title": c.title, "before": state(c.before), "after": state(c.after)}
    if c.after is not None:
        doc["fix"] = c.after.fix
    return doc


def changes_tables(
    resolved: tuple[Change, ...],
    new: tuple[Change, ...],
    persisting: tuple[Change, ...],
    note: str,
) -> list[RenderableType]:
    """A diff's three tables of findings, and the dim note on how they were matched."""
    return [
        changes_table("resolved", resolved),
        changes_table("new", new),
        changes_table("persisting", persisting),
        Text(note, style="dim"),
    ]
