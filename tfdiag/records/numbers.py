"""Statistics over measured times, shared by every measurement: median, IQR, noise, percent.

Plain Python (``statistics``); nothing here formats or prints.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

#: IQR / median above this marks a measurement as noisy (torch.utils.benchmark's 10 %).
NOISE_THRESHOLD = 0.10


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def iqr(values: Sequence[float]) -> float | None:
    """Interquartile range (inclusive quartiles); ``None`` below two values."""
    if len(values) < 2:
        return None
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[2] - q[0]


def quartiles(values: Sequence[float]) -> tuple[float, float] | None:
    """``(Q1, Q3)``, inclusive quartiles; a single value is its own interval; ``None`` empty."""
    if not values:
        return None
    if len(values) == 1:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def reliably_faster(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a``'s interquartile interval lies wholly below ``b``'s: a difference beyond both
    runs' noise, not an overlap that running either again could reverse."""
    qa, qb = quartiles(a), quartiles(b)
    return qa is not None and qb is not None and qa[1] < qb[0]


def relative_spread(values: Sequence[float]) -> float | None:
    """IQR / median, the noise figure torch.utils.benchmark warns on."""
    m, spread = median(values), iqr(values)
    if m is None or spread is None or m <= 0:
        return None
    return spread / m


def is_noisy(values: Sequence[float], threshold: float = NOISE_THRESHOLD) -> bool:
    spread = relative_spread(values)
    return spread is not None and spread > threshold


def signed_percent(a_s: float, b_s: float) -> float:
    """The seeds' percent difference of ``a`` against ``b``: ``(1 - longer/shorter) * 100``.

    Its magnitude is how much longer the slower one takes, in percent of the
    faster one; the sign says which side is faster: positive when ``a`` is faster
    (the seeds' "GvE: + if Graph is faster" with ``a`` = graph). Equal times give 0.

    Raises:
        ValueError: a time is not positive.
    """
    if a_s <= 0 or b_s <= 0:
        raise ValueError(f"times must be positive, got {a_s!r} and {b_s!r}")
    shorter, longer = min(a_s, b_s), max(a_s, b_s)
    magnitude = -(1 - longer / shorter) * 100
    return magnitude if a_s < b_s else -magnitude


class TimedBlocks:
    """Statistics over ``times_s`` (seconds per call, one per timed block), for any record
    that has it: a compared method, a bench cell."""

    times_s: tuple[float, ...]

    @property
    def median_s(self) -> float | None:
        return median(self.times_s)

    @property
    def iqr_s(self) -> float | None:
        return iqr(self.times_s)

    @property
    def spread(self) -> float | None:
        return relative_spread(self.times_s)

    @property
    def noisy(self) -> bool:
        return is_noisy(self.times_s)
