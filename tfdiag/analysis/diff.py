"""Two runs' iteration times side by side: the ratio AFTER/BEFORE, each run's noise, and
whether AFTER is faster, slower or the same *beyond the noise* — a verdict that a loaded
machine must not move (docs/ci.md).

Each run's noise is its interquartile interval ``[Q1, Q3]`` (inclusive quartiles, as
:func:`tfdiag.records.numbers.iqr`); its *floor* is the median of its blocks' fastest times
(the run cut into :data:`BLOCKS` consecutive blocks: a neighbour's job only ever adds time,
so each block's fastest call is the least loaded). A verdict needs every kind of evidence at
once: at least :data:`MIN_BLOCKS` blocks per side, the ratio of medians *and* the ratio of
floors beyond the threshold, and the interquartile intervals apart. One run of ten 2 ms
calls lasts 20 ms, a scheduler slice of a busy neighbour, so two saved runs can still differ
by a load burst: the paired rule (:func:`paired_slower`) reads an interleaved re-measurement
of both calls, round by round, which a burst slows alike. Plain Python, no TensorFlow.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tfdiag.records.catalog.backends import PACKAGES
from tfdiag.records.report import Environment

VERDICTS = ("faster", "slower", "same")
#: Consecutive blocks a run's times are cut into (fewer when a block would hold < 2 times).
BLOCKS = 3
#: Blocks each side needs before any verdict but ``same``.
MIN_BLOCKS = 2
#: Interleaved rounds the paired rule needs before any verdict but ``same``.
MIN_PAIRS = 6


def floors(times: Sequence[float], blocks: int = BLOCKS) -> tuple[float, ...]:
    """Each consecutive block's fastest time, in run order (a block holds ≥ 2 times)."""
    k = max(1, min(blocks, len(times) // 2))
    size = len(times) // k
    return tuple(
        min(times[i * size : (i + 1) * size if i < k - 1 else len(times)]) for i in range(k)
    )


@dataclass(frozen=True)
class Spread:
    """One run's per-iteration times: median, quartiles and block floors (seconds), and how
    many times."""

    median_s: float
    q1_s: float
    q3_s: float
    n: int
    #: Each consecutive block's fastest time (:func:`floors`); empty: one block, the median.
    floors_s: tuple[float, ...] = ()

    @property
    def iqr_s(self) -> float:
        return self.q3_s - self.q1_s

    @property
    def floor_s(self) -> float:
        """The median of the blocks' fastest times (the median when there are none)."""
        return statistics.median(self.floors_s) if self.floors_s else self.median_s

    @property
    def blocks(self) -> int:
        return max(len(self.floors_s), 1)

    @classmethod
    def of(cls, times: Sequence[float]) -> Spread:
        """The spread of ``times`` (at least one; a single time is its own interval)."""
        if not times:
            raise ValueError("no times")
        if len(times) == 1:
            return cls(times[0], times[0], times[0], 1, (times[0],))
        q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
        return cls(statistics.median(times), q1, q3, len(times), floors(times))


def ratio(before: Spread, after: Spread) -> float | None:
    """Median AFTER / median BEFORE (None when BEFORE's median is not positive)."""
    return after.median_s / before.median_s if before.median_s > 0 else None


def enough(before: Spread, after: Spread) -> bool:
    """Both runs hold at least :data:`MIN_BLOCKS` blocks: evidence from more than one
    stretch of time on each side."""
    return before.blocks >= MIN_BLOCKS and after.blocks >= MIN_BLOCKS


def slower_than(before: Spread, after: Spread, factor: float = 1.0) -> bool:
    """AFTER is slower than ``factor`` × BEFORE beyond the noise: enough blocks per side,
    the medians' and the floors' ratios both beyond ``factor``, and AFTER's interquartile
    interval wholly above BEFORE's scaled by ``factor``."""
    return (
        enough(before, after)
        and after.median_s > factor * before.median_s
        and after.floor_s > factor * before.floor_s
        and after.q1_s > factor * before.q3_s
    )


def faster(before: Spread, after: Spread) -> bool:
    """AFTER is faster beyond the noise: :func:`slower_than` with the sides swapped."""
    return slower_than(after, before)


def verdict(before: Spread, after: Spread) -> str:
    """``faster``, ``slower`` or ``same`` (:func:`slower_than` either way, factor 1)."""
    if faster(before, after):
        return "faster"
    if slower_than(before, after):
        return "slower"
    return "same"


def pair_ratios(pairs: Sequence[tuple[float, float]]) -> tuple[float, ...]:
    """Each interleaved round's AFTER / BEFORE (rounds whose BEFORE took no time left out)."""
    return tuple(a / b for b, a in pairs if b > 0)


def paired_slower(pairs: Sequence[tuple[float, float]], factor: float = 1.0) -> bool:
    """From interleaved rounds ``(before_s, after_s)``: AFTER is slower than ``factor`` ×
    BEFORE when the median round's ratio is beyond ``factor`` and three rounds in four or
    more (the ratios' lower quartile) have AFTER slower: a burst slows a round's two blocks
    alike, so it moves a few rounds' ratios, never the quartile."""
    ratios = pair_ratios(pairs)
    if len(ratios) < MIN_PAIRS:
        return False
    q1, median, _ = statistics.quantiles(ratios, n=4, method="inclusive")
    return median > factor and q1 > 1.0


def paired_verdict(pairs: Sequence[tuple[float, float]]) -> str:
    """``faster``, ``slower`` or ``same`` from interleaved rounds (:func:`paired_slower`)."""
    if paired_slower(pairs):
        return "slower"
    if paired_slower([(a, b) for b, a in pairs]):
        return "faster"
    return "same"


def environment_differences(before: Environment, after: Environment) -> list[str]:
    """What differs between the machines or versions two runs had, one phrase each."""
    fields = (
        ("Python", before.python, after.python),
        ("platform", before.platform, after.platform),
        *(
            (p.label, before.version(p.key), after.version(p.key))
            for p in PACKAGES
            if p.first_layout
        ),
        ("CPUs", before.cpu_count, after.cpu_count),
        ("devices", ", ".join(before.devices), ", ".join(after.devices)),
    )
    out = []
    for name, a, b in fields:
        if a != b:
            out.append(f"{name} {a or 'unknown'} → {b or 'unknown'}")
    return out
