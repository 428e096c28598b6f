"""Your lines, on the console: the user's lines that call the frameworks, costliest first,
each with the API it calls, how often per iteration and the share of steady state below it.

Shown under the findings on the first screen; every string from the record is text.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text

from tfdiag.analysis.lines import UserLine
from tfdiag.records.units import fmt_pct0

#: Lines shown on the console (the JSON and the HTML page have them all).
TOP_LINES = 5
#: Characters of a line's source text shown.
MAX_CODE = 62


def calls_text(line: UserLine) -> str:
    """``1×``, ``≈3×``, ``0.5×`` per iteration; "" when not known."""
    n = line.calls_per_iteration
    if n is None:
        return "loop" if line.repeated else ""
    figure = f"{n:.0f}" if n >= 10 or abs(n - round(n)) < 0.05 else f"{n:.1f}"
    return f"{'' if line.exact else '≈'}{figure}×"


def _code(code: str) -> str:
    return code if len(code) <= MAX_CODE else code[: MAX_CODE - 1] + "…"


def lines_block(
    lines: Sequence[UserLine],
    top: int = TOP_LINES,
    title: str = "Your lines",
    scope: str = "% of steady state, calls per iteration",
) -> RenderableType | None:
    """The section, or None when no line was recorded."""
    if not lines:
        return None
    parts: list[RenderableType] = [
        Text.assemble(
            (title, "bold"),
            (f" — where your code calls the framework: {scope}", "dim"),
        )
    ]
    for line in lines[:top]:
        what = line.api or "your own code"
        if line.entry:
            what = f"{what} (the call profiled)"
        parts.append(
            Text.assemble(
                f"  {fmt_pct0(line.share):>5}  {calls_text(line):>5}  ",
                (line.location, "bold"),
                "  → ",
                what,
            )
        )
        if line.code:
            parts.append(Text.assemble("               ", (_code(line.code), "cyan")))
    if len(lines) > top:
        parts.append(
            Text(f"  … {len(lines) - top} more in the JSON and the HTML page", style="dim")
        )
    return Group(*parts)
