"""A finding as console lines: its head (severity, id, title, impact), evidence and fix.

One block for every view that lists findings (the report, a ``tfdiag run`` site).
Every string is rendered as text, never as rich markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import RenderableType
from rich.text import Text

from tfdiag.advise import Finding
from tfdiag.records.units import fmt_pct0, fmt_ratio, fmt_s
from tfdiag.records.verification import (
    FAILED,
    VERIFIED,
    VariantRun,
    Verification,
)

SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}
STATUS_STYLE = {VERIFIED: "bold green", FAILED: "red"}


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
    if f.verification is not None:
        lines.extend(verification_lines(f.verification, body))
    return lines


def _timed(v: VariantRun) -> str:
    spread = f" (IQR {fmt_s(v.iqr_s)})" if v.iqr_s is not None else ""
    return f"{fmt_s(v.median_s)}{spread}"


def verification_lines(v: Verification, body: str = "   ") -> list[Text]:
    """``Verified ×37 …`` and one line per variant tried: its figures, its check, its reason."""
    status = v.status
    style = STATUS_STYLE.get(status, "yellow")
    best = v.best
    if status == VERIFIED and best is not None:
        verdict = (
            f" {fmt_ratio(v.speedup(best))} faster with {best.name}: {_timed(best)} per call "
            f"vs {fmt_s(v.baseline_median_s)} (IQR {fmt_s(v.baseline_iqr_s)}) as written; "
            f"{best.check}"
        )
    else:
        verdict = f" — {v.reason}" if v.reason else ""
    lines = [Text.assemble(body, (f"Verification: {status}", style), verdict)]
    for x in v.variants:
        ratio = v.speedup(x)
        what = "bound" if x.role == "bound" else "variant"
        figures = f"{_timed(x)}, {fmt_ratio(ratio)}" if x.times_s else "not timed"
        outcome = x.problem or x.check
        lines.append(
            Text.assemble(body, "  ", (f"{what} ", "dim"), x.name, f": {figures} — {outcome}")
        )
        code = x.fix.replace("\n", "\n" + body + "         ")
        lines.append(Text.assemble(body, "    ", ("ran: ", "dim"), code))
    lines.extend(Text.assemble(body, "  ", ("note: ", "dim"), n) for n in v.notes)
    return lines
