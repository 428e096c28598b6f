"""Two runs of one call compared: each run's iteration times, the ratio and verdict
(:mod:`tfdiag.analysis.diff`), and the findings matched by id — resolved (only before),
new (only after), persisting (in both) — with why the runs may not be comparable.

The timeline's findings (``warmup``, ``spikes``, ``drift``) are never matched: they read the
machine and the run's order (a neighbour's job, the garbage collector, a cold cache), so one
appearing in AFTER is not the change's. Cold calls are compared only with cold calls: each
run's warm-up iterations (the timeline's) are left out of its times."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import ClassVar

from tfdiag.advise.diagnosis import diagnosis_of
from tfdiag.advise.finding import Finding
from tfdiag.advise.work import NO_FINDING
from tfdiag.analysis.diff import (
    Spread,
    environment_differences,
    pair_ratios,
    paired_slower,
    paired_verdict,
    ratio,
    slower_than,
    verdict,
)
from tfdiag.analysis.timeline import analyze_timeline
from tfdiag.records.errors import InputError
from tfdiag.records.report import RunRecord

#: Findings of the iteration timeline: the machine's and the run's order, never the change's.
TIMELINE_IDS = frozenset({"warmup", "spikes", "drift"})


@dataclass(frozen=True)
class Side:
    """One of the two runs: how it is named, what was called, its iteration times."""

    name: str
    label: str
    spread: Spread
    partial: bool = False


@dataclass(frozen=True)
class Change:
    """A finding by id: its state in BEFORE and in AFTER (None where absent)."""

    id: str
    before: Finding | None
    after: Finding | None

    @property
    def title(self) -> str:
        f = self.after or self.before
        assert f is not None
        return f.title


@dataclass(frozen=True)
class DiffRecord:
    """BEFORE and AFTER compared.

    Attributes:
        ratio: median AFTER / median BEFORE per iteration (None: BEFORE took no time).
        verdict: ``faster``, ``slower`` or ``same`` beyond the noise
            (:mod:`tfdiag.analysis.diff`).
        resolved, new, persisting: the findings only in BEFORE, only in AFTER, in both.
        warnings: why the two runs may not be comparable (other machines or versions, a
            partial run), one line each.
        pairs: the interleaved re-measurement's rounds, ``(before_s, after_s)`` per call
            (empty: none ran); when present the ratio, verdict and gate are theirs.
    """

    before: Side
    after: Side
    ratio: float | None
    verdict: str
    resolved: tuple[Change, ...]
    new: tuple[Change, ...]
    persisting: tuple[Change, ...]
    warnings: tuple[str, ...] = ()
    pairs: tuple[tuple[float, float], ...] = ()

    kind: ClassVar[str] = "diff"

    def slower_than(self, factor: float) -> bool:
        """AFTER is slower than ``factor`` × BEFORE beyond the noise (``--fail-if-slower``):
        the interleaved rounds' rule when they ran, else the saved runs'."""
        if self.pairs:
            return paired_slower(self.pairs, factor)
        return slower_than(self.before.spread, self.after.spread, factor)


def _side(record: RunRecord, name: str) -> Side:
    times = record.timing.plain_s
    if not times:
        raise InputError(
            f"{name}: the report has no timed iterations (a bare .prof?): diff compares two "
            "tfdiag.profile reports"
        )
    warmup = analyze_timeline(times).warmup
    if warmup is not None and warmup.iterations < len(times):
        times = times[warmup.iterations :]  # the cold iterations: compared with nothing warm
    return Side(name, record.call.label, Spread.of(times), record.partial)


def diff_record(
    before: RunRecord,
    after: RunRecord,
    names: tuple[str, str],
    pairs: tuple[tuple[float, float], ...] = (),
) -> DiffRecord:
    """Two runs compared (``names``: how the output calls them; ``pairs``: an interleaved
    re-measurement's rounds, which then decide the ratio and verdict).

    Raises:
        InputError: a run without timed iterations.
    """
    a, b = _side(before, names[0]), _side(after, names[1])
    # "No known slow pattern" says where the time went, not a cause: it is never resolved,
    # new or persisting.
    skip = TIMELINE_IDS | {NO_FINDING}
    old = {f.id: f for f in diagnosis_of(before).findings if f.id not in skip}
    now = {f.id: f for f in diagnosis_of(after).findings if f.id not in skip}
    warnings = []
    differs = environment_differences(before.environment, after.environment)
    if differs:
        warnings.append(
            "the runs are from different machines or versions ("
            + "; ".join(differs)
            + "): the ratio mixes that difference with your change"
        )
    for side in (a, b):
        if side.partial:
            warnings.append(f"{side.name} is a partial run (interrupted): fewer iterations")
    if pairs:
        rounds = len(pairs)
        a = Side(a.name, a.label, Spread.of([p[0] for p in pairs]), a.partial)
        b = Side(b.name, b.label, Spread.of([p[1] for p in pairs]), b.partial)
        warnings.append(
            f"the saved runs did not show AFTER faster: both calls were re-measured "
            f"interleaved ({rounds} rounds), and the times and verdict are that re-measurement's"
        )
    ratios = pair_ratios(pairs)
    return DiffRecord(
        before=a,
        after=b,
        ratio=statistics.median(ratios) if ratios else ratio(a.spread, b.spread),
        verdict=paired_verdict(pairs) if pairs else verdict(a.spread, b.spread),
        resolved=tuple(Change(i, f, None) for i, f in old.items() if i not in now),
        new=tuple(Change(i, None, f) for i, f in now.items() if i not in old),
        persisting=tuple(Change(i, f, now[i]) for i, f in old.items() if i in now),
        warnings=tuple(warnings),
        pairs=pairs,
    )
