"""A finding as console lines: its head (severity, id, title, impact), evidence and fix.

One block for every view that lists findings (the report, a ``tfdiag run`` site).
Every string is rendered as text, never as rich markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import RenderableType
from rich.text import Text

from tfdiag.advise import Finding
from tfdiag.records.units import fmt_pct0

SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def finding_block(
    f: Finding,
    *,
    head: str = "",
    body: str = "   ",
    evidence: int | None = None,
) -> list[RenderableType]:
    """``head`` prefixes the first line (``"1. "``), ``body`` the evidence and fix lines;
    ``evidence`` keeps only the first lines of evidence."""
    lines: list[RenderableType] = [
        Text.assemble(
            head,
            (f"[{f.severity}] ", SEVERITY_STYLE.get(f.severity, "")),
            (f.id, "bold"),
            f" — {f.title}",
            (f"  (impact {fmt_pct0(f.impact)})", "dim"),
        )
    ]
    shown: Sequence[str] = f.evidence if evidence is None else f.evidence[:evidence]
    if shown:
        lines.append(Text("\n".join(f"{body}• {e}" for e in shown)))
    lines.append(Text.assemble(body, ("Fix:", "green"), f" {f.fix}"))
    return lines
