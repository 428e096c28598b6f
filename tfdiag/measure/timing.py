"""Interleaved timing, as ``torch.utils.benchmark`` does it, with an injectable clock.

Every runner is a callable ``run(number)`` that performs ``number`` calls of one
method. :func:`measure` first makes ``warmup`` untimed-for-the-statistics calls of
every method (graph building, tracing and caches land there), picks for each method
a block size ``number`` so one timed block lasts at least ``min_block_s`` (guessed from
its last warm-up call, then grown by untimed blocks until one lasts that long, as
timeit's autorange does), then times ``repeats`` rounds. Within a round every live
method runs one block, and the order rotates from round to round, so a machine that
drifts (heat, a neighbour's job) favours no method. A method that raises is dropped
with its one-line error; the others keep running.

Nothing here imports TensorFlow, prints, or formats.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from tfdiag.records.clock import Clock, Progress

#: The most calls one timed block may hold.
MAX_NUMBER = 10_000
#: Untimed blocks at most that grow a block until it lasts ``min_block_s``.
CALIBRATIONS = 3

Runner = Callable[[int], object]
#: ``on_step(done, total, name)`` after every warm-up call and timed block (Progress).


@dataclass(frozen=True)
class Timed:
    """The raw record of one method: what :func:`measure` saw, nothing derived.

    ``times_s`` holds one per-call time per timed block (the block's time divided
    by ``number``); ``warmup_s`` the warm-up calls, the first of them cold.
    """

    name: str
    number: int
    times_s: tuple[float, ...]
    warmup_s: tuple[float, ...]
    error: str | None = None


def one_line(exc: BaseException) -> str:
    """``TypeName: first line of the message`` (at most 200 characters)."""
    text = str(exc).strip().splitlines()
    line = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return line if len(line) <= 200 else line[:199] + "…"


def block_size(call_s: float, min_block_s: float, max_number: int = MAX_NUMBER) -> int:
    """Calls per timed block so that one block lasts at least ``min_block_s``."""
    if call_s <= 0:
        return max_number if min_block_s > 0 else 1
    return max(1, min(max_number, math.ceil(min_block_s / call_s)))


def measure(
    runners: Sequence[tuple[str, Runner]],
    *,
    warmup: int = 2,
    repeats: int = 10,
    min_block_s: float = 0.01,
    number: int | None = None,
    clock: Clock = time.perf_counter,
    on_step: Progress | None = None,
    warm_in: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> tuple[Timed, ...]:
    """Time every runner, interleaved; the records come back in the runners' order.

    Args:
        runners: ``(name, run)`` pairs; ``run(n)`` makes ``n`` calls.
        warmup: calls per method before timing (at least 1: the first call builds).
        repeats: timed rounds; each method runs one block per round.
        min_block_s: a block holds enough calls to last at least this long: guessed from
            the last warm-up call, then grown by untimed blocks until one lasts that long.
        number: a fixed block size for every method instead of ``min_block_s``.
        clock: seconds as a float (``time.perf_counter``; a fake one in tests).
        on_step: progress callback.
        warm_in: a block entered around each warm-up call, outside its clock (compare's
            native-log window: the first calls build graphs and compile, and log).
    """
    if warmup < 1:
        raise ValueError("warmup must be at least 1: the first call builds graphs")
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    names = [name for name, _ in runners]
    if len(set(names)) != len(names):
        raise ValueError("runner names must be unique")
    run = dict(runners)
    warm: dict[str, list[float]] = {name: [] for name in names}
    times: dict[str, list[float]] = {name: [] for name in names}
    errors: dict[str, str] = {}
    numbers: dict[str, int] = {}
    per_method = warmup + repeats
    total = per_method * len(names)
    taken = dict.fromkeys(names, 0)

    def timed(
        name: str, n: int, around: Callable[[], AbstractContextManager[object]] = nullcontext
    ) -> float | None:
        """One block of ``n`` calls: its seconds, or None when it raised (the method is
        dropped with its one-line error, and its remaining steps will not run)."""
        try:
            with around():
                t0 = clock()
                run[name](n)
                elapsed = clock() - t0
        except Exception as exc:  # the method failed; the others still run
            errors[name] = one_line(exc)
            taken[name] = per_method
            return None
        return elapsed

    def step(
        name: str,
        n: int,
        into: list[float],
        around: Callable[[], AbstractContextManager[object]] = nullcontext,
    ) -> None:
        taken[name] += 1
        elapsed = timed(name, n, around)
        if elapsed is not None:
            into.append(elapsed / n)
        if on_step is not None:
            on_step(sum(taken.values()), total, name)

    for r in range(warmup):
        for name in _rotated(names, r, errors):
            step(name, 1, warm[name], warm_in)

    def calibrated(name: str, n: int) -> int:
        """Grow ``n`` until one block of it lasts ``min_block_s``, as timeit's autorange does,
        starting from the warm-up's guess. That guess comes from one call: the cold one when
        ``warmup`` is 1, or one the machine stalled, and either makes every block a call or two,
        too short to average a stall out (a 0.5 ms call stalled 5 ms read as 10x). With no
        minimum there is nothing to grow to, and no untimed block is run."""
        if min_block_s <= 0:
            return n
        for _ in range(CALIBRATIONS):
            if n >= MAX_NUMBER:
                break
            elapsed = timed(name, n)
            if elapsed is None or elapsed >= min_block_s:
                break
            n = max(n + 1, block_size(elapsed / n, min_block_s))
        return n

    for name in names:
        if name not in errors:
            numbers[name] = number or calibrated(name, block_size(warm[name][-1], min_block_s))
    for r in range(repeats):
        for name in _rotated(names, r, errors):
            step(name, numbers[name], times[name])
    return tuple(
        Timed(
            name=name,
            number=numbers.get(name, 1),
            times_s=() if name in errors else tuple(times[name]),
            warmup_s=tuple(warm[name]),
            error=errors.get(name),
        )
        for name in names
    )


def _rotated(names: list[str], r: int, errors: dict[str, str]) -> list[str]:
    """This round's order: the list rotated by ``r``, failed methods left out."""
    k = r % len(names) if names else 0
    return [n for n in names[k:] + names[:k] if n not in errors]
