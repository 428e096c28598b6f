"""Which of the user's lines a finding is about: up from the finding's culprit (a profile
row) to the line of the user's code that calls into it.

A detector names its culprit (:attr:`~tfdiag.advise.finding.Detection.culprit`: the pipeline
builder, the model builder, the framework call that dispatches the eager ops); the anchor
is the user's line whose callee, or the API it calls through wrappers, lies on the
heaviest caller path up from it. Without a culprit, or with no line above it, a finding
may name the natures it is about (:data:`FAMILY_NATURES`): its anchor is then the costliest
line of one of them; else the line that made the call profiled.
"""

from __future__ import annotations

from collections.abc import Collection

from tfdiag.analysis.lines import UserLine
from tfdiag.analysis.pipeline import Analysis
from tfdiag.records.paths import is_user_code

#: Up to this many steps up the heaviest callers from a culprit.
_MAX_DEPTH = 200

#: The natures of the lines each finding can be about, when its culprit leads to none: a
#: finding is anchored only at a line whose kind of work it explains.
FAMILY_NATURES: dict[str, frozenset[str]] = {
    "per-call-input-pipeline": frozenset({"keras-loop", "keras-step", "data-iterate", "construct"}),
    "model-rebuilt-per-call": frozenset({"construct", "setup", "clear"}),
    "per-iteration-tracing": frozenset({"graph-call", "construct", "setup", "keras-loop"}),
    "eager-execution": frozenset(
        {
            "model-call",
            "eager-op",
            "train-op",
            "weights-host",
            "metric",
            "summary",
            "to-host",
            "convert",
        }
    ),
    "conversion-overhead": frozenset({"convert", "to-host", "keras-step", "keras-loop"}),
    "input-bound": frozenset({"data-read", "data-iterate", "keras-loop"}),
    "per-step-overhead": frozenset({"keras-loop", "graph-call"}),
    "per-epoch-overhead": frozenset({"keras-loop"}),
    "callback-overhead": frozenset(),
}


#: The natures whose remedy cures a finding of each family (the rest of an anchored line's
#: natures only place the finding: a float64 input passed to `predict_on_batch` is cured by
#: converting it once, not by another way to call the model).
FAMILY_REMEDIES: dict[str, frozenset[str]] = {
    **FAMILY_NATURES,
    "conversion-overhead": frozenset({"convert", "to-host"}),
    # reading the data is the pipeline's business: only reading it to count it has a remedy
    # of its own (the data-read rule gives none otherwise)
    "input-bound": frozenset({"data-read"}),
    "per-step-overhead": frozenset(),
    "per-epoch-overhead": frozenset(),
    "per-iteration-tracing": frozenset({"construct", "setup"}),
}


def lines_above(analysis: Analysis, culprit: int) -> tuple[UserLine, ...]:
    """The user's lines whose call reaches ``culprit`` along its heaviest callers, nearest
    first (the line calling it directly, then the lines above that one)."""
    by_callee: dict[int, list[UserLine]] = {}
    for u in analysis.lines:
        for i in {u.callee, u.api_index} - {None}:
            by_callee.setdefault(i, []).append(u)  # type: ignore[arg-type]
    fns = analysis.steady.functions
    seen: set[int] = set()
    found: list[UserLine] = []
    i = culprit
    for _ in range(_MAX_DEPTH):
        if i in seen:
            break
        seen.add(i)
        for u in sorted(by_callee.get(i, ()), key=lambda u: u.share, reverse=True):
            if u not in found:
                found.append(u)
        if found and is_user_code(fns[i].file):
            break  # the user's function holding the line: the lines above it are callers'
        if not fns[i].callers:
            break
        i = max(fns[i].callers, key=lambda e: e.cum_s).caller
    return tuple(found)


def anchor(
    analysis: Analysis, family: str, culprit: int | None, natures: Collection[str] | None = None
) -> UserLine | None:
    """The line a finding of ``family`` is about (None: no line is known)."""
    wanted = natures if natures is not None else FAMILY_NATURES.get(family, frozenset())
    if culprit is not None:
        above = lines_above(analysis, culprit)
        inner = [u for u in above if not u.entry]
        if inner:
            return inner[0]
    candidates = [u for u in analysis.lines if not u.entry and u.nature in wanted]
    if candidates:
        return max(candidates, key=lambda u: u.share)
    entry = next((u for u in analysis.lines if u.entry), None)
    return entry
