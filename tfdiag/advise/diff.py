"""Two runs of one call compared: each run's iteration times, the ratio and verdict
(:mod:`tfdiag.analysis.diff`), and the findings matched by id — resolved (only before),
new (only after), persisting (in both) — with why the runs may not be comparable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tfdiag.advise.diagnosis import diagnosis_of
from tfdiag.advise.finding import Finding
from tfdiag.advise.work import NO_FINDING
from tfdiag.analysis.diff import Spread, environment_differences, ratio, slower_than, verdict
from tfdiag.records.errors import InputError
from tfdiag.records.report import RunRecord


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
    """

    before: Side
    after: Side
    ratio: float | None
    verdict: str
    resolved: tuple[Change, ...]
    new: tuple[Change, ...]
    persisting: tuple[Change, ...]
    warnings: tuple[str, ...] = ()

    kind: ClassVar[str] = "diff"

    def slower_than(self, factor: float) -> bool:
        """AFTER is slower than ``factor`` × BEFORE beyond the noise (``--fail-if-slower``)."""
        return slower_than(self.before.spread, self.after.spread, factor)


def _side(record: RunRecord, name: str) -> Side:
    times = record.timing.plain_s
    if not times:
        raise InputError(
            f"{name}: the report has no timed iterations (a bare .prof?): diff compares two "
            "tfdiag.profile reports"
        )
    return Side(name, record.call.label, Spread.of(times), record.partial)


def diff_record(before: RunRecord, after: RunRecord, names: tuple[str, str]) -> DiffRecord:
    """Two runs compared (``names``: how the output calls them).

    Raises:
        InputError: a run without timed iterations.
    """
    a, b = _side(before, names[0]), _side(after, names[1])
    # "No known slow pattern" says where the time went, not a cause: it is never resolved,
    # new or persisting.
    old = {f.id: f for f in diagnosis_of(before).findings if f.id != NO_FINDING}
    now = {f.id: f for f in diagnosis_of(after).findings if f.id != NO_FINDING}
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
    return DiffRecord(
        before=a,
        after=b,
        ratio=ratio(a.spread, b.spread),
        verdict=verdict(a.spread, b.spread),
        resolved=tuple(Change(i, f, None) for i, f in old.items() if i not in now),
        new=tuple(Change(i, None, f) for i, f in now.items() if i not in old),
        persisting=tuple(Change(i, f, now[i]) for i, f in old.items() if i in now),
        warnings=tuple(warnings),
    )
