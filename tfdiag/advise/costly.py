"""No empty report, by construction: when no other finding applies, the costliest of the
user's own lines is one, with the API it calls and the remedy its nature gives
(:mod:`tfdiag.advise.remedies`); :func:`tfdiag.advise.advise` drops it when any finding of
the steady state is reported."""

from __future__ import annotations

from tfdiag.advise.finding import Context, Detection

COSTLY_LINE = "costly-line"


def costly_line(ctx: Context) -> Detection | None:
    """The user's line with the largest share of the steady state below it, at least
    ``min_share`` of it (the line that made the call profiled is not one of them)."""
    lines = [u for u in ctx.analysis.lines if not u.entry and u.share < 0.995]
    if not lines:
        return None
    top = max(lines, key=lambda u: u.share)
    if top.share < ctx.threshold("min_share"):
        return None
    return Detection(top.share, (), line=top)
