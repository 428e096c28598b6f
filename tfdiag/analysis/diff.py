"""Two runs' iteration times side by side: the ratio AFTER/BEFORE, each run's noise, and
whether AFTER is faster, slower or the same *beyond the noise*.

The rule (docs/ci.md): each run's noise is its interquartile interval ``[Q1, Q3]`` of the
per-iteration times (inclusive quartiles, as :func:`tfdiag.records.numbers.iqr`). AFTER is
``faster`` when its whole interval lies below BEFORE's (``Q3_after < Q1_before``),
``slower`` when it lies above (``Q1_after > Q3_before``), else the ``same``: the runs'
middle halves overlap, so the difference is within what repeating either run gives.
``slower_than(x)`` asks the same of BEFORE's interval scaled by ``x``: a CI gate that lets
AFTER be up to ``x`` times slower before it fails. Plain Python, no TensorFlow.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tfdiag.records.report import Environment

VERDICTS = ("faster", "slower", "same")


@dataclass(frozen=True)
class Spread:
    """One run's per-iteration times: median and quartiles (seconds), and how many."""

    median_s: float
    q1_s: float
    q3_s: float
    n: int

    @property
    def iqr_s(self) -> float:
        return self.q3_s - self.q1_s

    @classmethod
    def of(cls, times: Sequence[float]) -> Spread:
        """The spread of ``times`` (at least one; a single time is its own interval)."""
        if not times:
            raise ValueError("no times")
        if len(times) == 1:
            return cls(times[0], times[0], times[0], 1)
        q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
        return cls(statistics.median(times), q1, q3, len(times))


def ratio(before: Spread, after: Spread) -> float | None:
    """Median AFTER / median BEFORE (None when BEFORE's median is not positive)."""
    return after.median_s / before.median_s if before.median_s > 0 else None


def slower_than(before: Spread, after: Spread, factor: float = 1.0) -> bool:
    """AFTER is slower than ``factor`` × BEFORE beyond the noise: its interquartile interval
    lies wholly above BEFORE's scaled by ``factor``."""
    return after.q1_s > factor * before.q3_s


def verdict(before: Spread, after: Spread) -> str:
    """``faster``, ``slower`` or ``same``: whether the interquartile intervals overlap."""
    if after.q3_s < before.q1_s:
        return "faster"
    if slower_than(before, after):
        return "slower"
    return "same"


def environment_differences(before: Environment, after: Environment) -> list[str]:
    """What differs between the machines or versions two runs had, one phrase each."""
    fields = (
        ("Python", before.python, after.python),
        ("platform", before.platform, after.platform),
        ("TensorFlow", before.tensorflow, after.tensorflow),
        ("Keras", before.keras, after.keras),
        ("tf_keras", before.tf_keras, after.tf_keras),
        ("CPUs", before.cpu_count, after.cpu_count),
        ("devices", ", ".join(before.devices), ", ".join(after.devices)),
    )
    out = []
    for name, a, b in fields:
        if a != b:
            out.append(f"{name} {a or 'unknown'} → {b or 'unknown'}")
    return out
