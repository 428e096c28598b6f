"""The gate's second look: BEFORE's and AFTER's calls re-measured interleaved, round by round
(:func:`tfdiag.measure.timing.measure`: the order rotates, each block lasts ``min_block_s``),
so a load burst that slowed one saved run slows both calls of a round alike. The rounds go to
:func:`tfdiag.analysis.diff.paired_slower`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from tfdiag.measure.timing import measure
from tfdiag.records.clock import Clock
from tfdiag.records.errors import InputError
from tfdiag.records.report import RunRecord
from tfdiag.records.script import ScriptRecord
from tfdiag.results.diff import DiffResult, ScriptDiffResult
from tfdiag.results.diff import diff as diff_saved

#: Rounds of the re-measurement: one block of each call per round.
ROUNDS = 30
#: Each block lasts at least this long (a few scheduler slices at most: short enough that a
#: round's two blocks see the same load).
MIN_BLOCK_S = 0.005


def recheck(
    before: Callable[[], object],
    after: Callable[[], object],
    *,
    rounds: int = ROUNDS,
    min_block_s: float = MIN_BLOCK_S,
    clock: Clock = time.perf_counter,
) -> tuple[tuple[float, float], ...]:
    """``rounds`` interleaved rounds of both calls: each round's ``(before_s, after_s)``
    per call.

    Raises:
        InputError: either call raised (its one-line error).
    """

    def runner(fn: Callable[[], object]) -> Callable[[int], object]:
        def run(n: int) -> None:
            for _ in range(n):
                fn()

        return run

    timed = measure(
        [("before", runner(before)), ("after", runner(after))],
        warmup=2,
        repeats=rounds,
        min_block_s=min_block_s,
        clock=clock,
    )
    for t in timed:
        if t.error is not None:
            raise InputError(f"re-measuring {t.name}: {t.error}")
    return tuple(zip(timed[0].times_s, timed[1].times_s))


def diff(
    before: RunRecord | ScriptRecord | str | os.PathLike[str],
    after: RunRecord | ScriptRecord | str | os.PathLike[str],
    *,
    rerun: tuple[Callable[[], object], Callable[[], object]] | None = None,
) -> DiffResult | ScriptDiffResult:
    """Compare two runs of a call, before and after a change: the per-iteration ratio
    AFTER/BEFORE with both runs' noise, a verdict (``faster``, ``slower``, ``same`` beyond the
    noise: docs/ci.md), and the findings ``resolved``, ``new`` and ``persisting`` by id with
    their impacts. Runs from different machines or versions are compared with a warning.

    Args:
        before, after: reports (``tfdiag.profile``'s) or the paths of saved ones; or two
            ``tfdiag run`` results (a :class:`~tfdiag.results.diff.ScriptDiffResult`: the
            scripts' times, and each patch of a saved ``tfdiag fix`` result in AFTER).
        rerun: BEFORE's and AFTER's calls, with no arguments (``lambda: old(x)``, ``lambda:
            new(x)``): unless the saved runs' first look says AFTER is faster, both are
            re-measured interleaved (:data:`ROUNDS` rounds) and the ratio, verdict and
            ``slower_than`` are that re-measurement's — a load burst that slowed one saved
            run cannot fail the gate.

    Raises:
        InputError: an unreadable report, one without timed iterations, or a ``rerun`` call
            that raised.
    """
    again = None if rerun is None else (lambda: recheck(*rerun))
    return diff_saved(before, after, again=again)
