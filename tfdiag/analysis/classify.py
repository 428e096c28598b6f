"""Stage 2: classify every function by its call count — the seeds' method, done right.

With N iterations after one cold call (N + 1 calls profiled): a function called
1-2 times is one-time *build* cost; one called k·N or k·(N+1) times (plus up to
two one-off calls, e.g. a trace in the cold call) is *per-iteration* cost, k times
per iteration; anything else is *mixed*. Functions are keyed by
(file, line, qualified name), so an alias ``_func = func`` never merges two rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tfdiag.records.stats import ProfileStats

#: One-off calls tolerated on top of k per iteration (a trace in the cold call, a cache fill).
MAX_EXTRA_CALLS = 2
#: Below this many iterations, "called twice" cannot be told from "once per iteration".
MIN_ITERATIONS = 3


class CostClass(str, Enum):
    BUILD = "build"
    PER_ITERATION = "per-iteration"
    MIXED = "mixed"


@dataclass(frozen=True)
class Classification:
    """How one function's call count relates to the iterations.

    ``per_iter`` is k for per-iteration functions (``3`` → "3× per iteration"), the
    plain ratio calls/N for mixed ones, and 0 for build functions; ``extra`` counts
    the one-off calls on top of k per iteration.
    """

    cost: CostClass
    per_iter: float
    extra: int = 0

    def describe(self) -> str:
        if self.cost is CostClass.BUILD:
            return "build"
        if self.cost is CostClass.PER_ITERATION:
            k = int(self.per_iter)
            text = f"{k}× per iteration"
            return f"{text} (+{self.extra})" if self.extra else text
        return f"mixed (≈{self.per_iter:.2g}× per iteration)"

    def short(self) -> str:
        """``3×/iter +1``, ``build``, ``mixed ≈0.3×``: for narrow table columns."""
        if self.cost is CostClass.BUILD:
            return "build"
        if self.cost is CostClass.PER_ITERATION:
            text = f"{int(self.per_iter)}×/iter"
            return f"{text} +{self.extra}" if self.extra else text
        return f"mixed ≈{self.per_iter:.2g}×"


def classify_calls(calls: int, iterations: int) -> Classification:
    """Classify one call count against ``iterations`` (N, not counting the cold call)."""
    if iterations < 1:
        raise ValueError("iterations must be at least 1")
    if calls <= 2:
        return Classification(CostClass.BUILD, 0.0)
    best: tuple[int, int] | None = None  # (extra, k)
    # N + 1 first: per-iteration work usually runs in the cold call too, so on a tie
    # (12 calls in 3 iterations: 4 × 3 or 3 × 4) the cold call is counted in.
    for base in (iterations + 1, iterations):
        k, extra = divmod(calls, base)
        if k >= 1 and extra <= MAX_EXTRA_CALLS and (best is None or extra < best[0]):
            best = (extra, k)
    if best is not None and iterations >= MIN_ITERATIONS:
        return Classification(CostClass.PER_ITERATION, float(best[1]), best[0])
    return Classification(CostClass.MIXED, calls / iterations)


def classify(stats: ProfileStats, iterations: int) -> tuple[Classification, ...]:
    """One classification per function, by its primitive (non-recursive) call count."""
    cache: dict[int, Classification] = {}
    out = []
    for fn in stats.functions:
        c = cache.get(fn.primitive_calls)
        if c is None:
            c = cache[fn.primitive_calls] = classify_calls(fn.primitive_calls, iterations)
        out.append(c)
    return tuple(out)
