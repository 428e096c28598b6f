"""Two ``tfdiag run`` results compared, BEFORE and AFTER a change: the scripts' wall times,
the findings resolved, new and persisting (by id and line), and, where BEFORE is a saved
``tfdiag fix`` result, each patch's effect on its site in AFTER (a run of the patched
program): the time per call at the edited line before → after (the script's time where the
edit is not one call site in both), the ratio, and whether the finding is resolved.

Each script ran once: there is no spread to judge noise by, so the script's verdict is
taken beyond :data:`MARGIN` and says so; a patch's per-call times are the medians of the
site's calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tfdiag.advise.diff import Change
from tfdiag.advise.patches import finding_at
from tfdiag.advise.script import ScriptFinding, script_findings
from tfdiag.advise.work import NO_FINDING
from tfdiag.analysis.diff import environment_differences
from tfdiag.records.numbers import median
from tfdiag.records.patches import PatchRecord
from tfdiag.records.script import CallSite, ScriptRecord

#: One run of each script: a wall-time change within this factor is "the same".
MARGIN = 1.1


@dataclass(frozen=True)
class ScriptSide:
    """One of the two runs: how it is named, its script, wall time and status."""

    name: str
    script: str
    wall_s: float
    status: str


@dataclass(frozen=True)
class PatchEffect:
    """One patch of BEFORE, seen in AFTER.

    Attributes:
        patch: BEFORE's patch record (its diff and what ``tfdiag fix`` measured).
        scope: ``per call`` (the edited line is a call site in both runs: medians of its
            calls) or ``script`` (the scripts' wall times).
        before_s, after_s: the times compared (``after_s`` None: the site is not in AFTER).
        resolved: no finding of the patch's id is left at the site in AFTER.
        applied: False when AFTER's site still runs a line the patch removed (AFTER is
            not a run of the patched program); None when no site says.
    """

    patch: PatchRecord
    scope: str
    before_s: float
    after_s: float | None
    resolved: bool
    applied: bool | None = None

    @property
    def speedup(self) -> float | None:
        """BEFORE's time over AFTER's (41: 41× faster), None when AFTER has none."""
        if self.after_s is None or self.after_s <= 0:
            return None
        return self.before_s / self.after_s


@dataclass(frozen=True)
class ScriptDiffRecord:
    """BEFORE and AFTER ``tfdiag run`` results compared (kind ``diff``, like two reports').

    ``ratio`` is AFTER's wall time over BEFORE's, ``verdict`` ``faster``, ``slower`` or
    ``same`` beyond :data:`MARGIN`; ``effects`` one per patch of BEFORE with a diff."""

    before: ScriptSide
    after: ScriptSide
    ratio: float | None
    verdict: str
    effects: tuple[PatchEffect, ...]
    resolved: tuple[Change, ...]
    new: tuple[Change, ...]
    persisting: tuple[Change, ...]
    warnings: tuple[str, ...] = ()

    kind: ClassVar[str] = "diff"

    def slower_than(self, factor: float) -> bool:
        """``--fail-if-slower``: AFTER's wall time above ``factor`` × BEFORE's (one run each)."""
        return self.after.wall_s > factor * self.before.wall_s


def _same_place(a: str, b: str) -> bool:
    """Two ``file:line`` places, one path possibly relative to a folder of the other's."""
    a, b = a.replace("\\", "/"), b.replace("\\", "/")
    return bool(a and b) and (a == b or a.endswith("/" + b) or b.endswith("/" + a))


def _place(sf: ScriptFinding) -> str:
    return finding_at(sf.finding) or (sf.site.location if sf.site else "")


def _site(record: ScriptRecord, place: str) -> CallSite | None:
    return next((s for s in record.sites if _same_place(s.location, place)), None)


def _per_call(site: CallSite) -> float:
    return site.unprofiled_median_s or median(site.call_s) or site.per_call_s


def _runs_removed_line(code: str, patch: str) -> bool:
    """Does a site's code (its line, maybe without its comment) read as a line the patch
    removed and did not add back?"""
    code = code.strip()

    def lines(sign: str) -> list[str]:
        return [x[1:].strip() for x in patch.splitlines() if x[:1] == sign and x[:3] != sign * 3]

    def same(x: str) -> bool:
        return x == code or x.startswith(code + " ") or x.startswith(code + "#")

    return any(same(x) for x in lines("-")) and not any(same(x) for x in lines("+"))


def _effect(p: PatchRecord, before: ScriptRecord, after: ScriptRecord) -> PatchEffect:
    old, new = _site(before, p.site), _site(after, p.new_site)
    places = {x for x in (p.at, p.site, p.new_site) if x}
    resolved = not any(
        sf.finding.id == p.finding and any(_same_place(_place(sf), x) for x in places)
        for sf in script_findings(after)
    )
    applied = None
    if new is not None and new.code:
        applied = not _runs_removed_line(new.code, p.patch)
    per_call = p.verified is None or p.verified.scope == "per call"
    if per_call and old is not None and new is not None:
        return PatchEffect(p, "per call", _per_call(old), _per_call(new), resolved, applied)
    return PatchEffect(p, "script", before.wall_s, after.wall_s, resolved, applied)


def _changes(
    before: tuple[ScriptFinding, ...], after: tuple[ScriptFinding, ...]
) -> tuple[tuple[Change, ...], tuple[Change, ...], tuple[Change, ...]]:
    """Findings matched by id and place: resolved, new, persisting."""
    old = {(sf.finding.id, _place(sf)): sf.finding for sf in before if sf.finding.id != NO_FINDING}
    now = {(sf.finding.id, _place(sf)): sf.finding for sf in after if sf.finding.id != NO_FINDING}
    return (
        tuple(Change(k[0], f, None) for k, f in old.items() if k not in now),
        tuple(Change(k[0], None, f) for k, f in now.items() if k not in old),
        tuple(Change(k[0], f, now[k]) for k, f in old.items() if k in now),
    )


def script_diff_record(
    before: ScriptRecord, after: ScriptRecord, names: tuple[str, str]
) -> ScriptDiffRecord:
    """BEFORE and AFTER compared; each patch of BEFORE's ``tfdiag fix`` looked for in AFTER."""
    a = ScriptSide(names[0], before.script, before.wall_s, before.status)
    b = ScriptSide(names[1], after.script, after.wall_s, after.status)
    ratio = after.wall_s / before.wall_s if before.wall_s > 0 else None
    if ratio is None:
        verdict = "same"
    else:
        verdict = "faster" if ratio * MARGIN < 1 else "slower" if ratio > MARGIN else "same"
    patches = before.fix.patches if before.fix is not None else ()
    effects = tuple(_effect(p, before, after) for p in patches if p.patch)
    warnings = []
    differs = environment_differences(before.environment, after.environment)
    if differs:
        warnings.append(
            "the runs are from different machines or versions (" + "; ".join(differs) + ")"
        )
    for side in (a, b):
        if side.status != "ok":
            warnings.append(f"{side.name} did not finish as written ({side.status})")
    if (
        before.script.replace("\\", "/").rsplit("/", 1)[-1]
        != after.script.replace("\\", "/").rsplit("/", 1)[-1]
    ):
        warnings.append(f"BEFORE ran {before.script}, AFTER {after.script}: not one script")
    for x in effects:
        if x.applied is False:
            warnings.append(
                f"AFTER still runs {x.patch.new_site} as it was before the patch: is it a run "
                "of the patched program?"
            )
    resolved, new, persisting = _changes(script_findings(before), script_findings(after))
    return ScriptDiffRecord(
        a, b, ratio, verdict, effects, resolved, new, persisting, tuple(warnings)
    )
