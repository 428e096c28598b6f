"""How many calls each pass of ``tfdiag.profile`` makes, and the checks of its arguments."""

from __future__ import annotations

import math

from tfdiag.records.errors import InputError

#: More iterations than this is a typo, not a profile.
MAX_ITERATIONS = 1_000_000


def check_iterations(iterations: object) -> int:
    if isinstance(iterations, bool) or not isinstance(iterations, int):
        raise InputError(f"iterations must be an integer, got {iterations!r}")
    if iterations < 1:
        raise InputError(f"iterations must be at least 1, got {iterations}")
    if iterations > MAX_ITERATIONS:
        raise InputError(f"iterations must be at most {MAX_ITERATIONS:,}, got {iterations:,}")
    return iterations


def profiled_iterations(n: int) -> int:
    """How many of the ``n`` iterations run under cProfile: a quarter of them (at least 3,
    the fewest that tell per-iteration from build cost; cProfile's counts are exact, so a
    few iterations classify as well as many), so the whole default diagnosis costs at most
    about twice the ``n`` plain iterations, its fixed costs included (benchmarks/
    diagnosis_cost.py)."""
    return min(n, max(MIN_PROFILED, math.ceil(n / 4)))


#: The fewest profiled iterations that tell "called twice" from "once per iteration".
MIN_PROFILED = 3


def probe_flag(value: object, name: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise InputError(f"{name} must be True, False or None (automatic), got {value!r}")
    return value
