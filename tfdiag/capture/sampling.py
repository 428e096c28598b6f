"""The sampling probe: the call's Python stack, read from a thread every few milliseconds.

pyinstrument's own profiler hooks every Python call and return; on ``predict``
(tens of thousands of calls per iteration) that alone costs ~1.2× (measured, see
docs/probes.md). Reading the stack from a second thread costs nothing per call,
only a GIL hand-over per sample, so it keeps the pass within 1.1×. The samples
become a pyinstrument session (:func:`tfdiag.render.artefacts.session_json`), so
pyinstrument's HTML and speedscope renderers still draw them.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from types import CodeType, FrameType
from typing import Any

from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.probes import FrameKey, SampledStack, SamplingRecord

#: Seconds between samples: 5 ms keeps the pass within 1.1× (docs/probes.md).
INTERVAL_S = 0.005
_MAX_DEPTH = 512


def _calls(
    fn: Callable[..., Any],
    args: Any,
    kwargs: Any,
    n: int,
    out: list[float],
    clock: Clock,
    step: Callable[[int], AbstractContextManager[Any]] | None = None,
) -> None:
    """The loop the sampler recognises as tfdiag's own frame (the stack is cut below it).

    ``step(i)``, when given, wraps call ``i`` (the TF profiler's step marker).
    """
    for i in range(n):
        around = step(i) if step is not None else nullcontext()
        t0 = clock()
        with around:
            fn(*args, **kwargs)
        out.append(clock() - t0)


_LOOP_CODE = _calls.__code__


class ThreadSampler:
    """Samples the calling thread's stack, and every other thread's while the caller is
    inside the call, from a daemon thread; ``stop()`` always joins it."""

    def __init__(self, interval_s: float = INTERVAL_S, clock: Clock = time.perf_counter) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self._last = clock()
        #: (thread name, codes root → leaf) → [samples, seconds]; "" names the caller.
        self.stacks: dict[tuple[str, tuple[CodeType, ...]], list[float]] = {}
        self.outside_s = 0.0
        #: Samples skipped because a stack could not be read.
        self.errors = 0
        self._target = threading.get_ident()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tfdiag-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        self._last = self.clock()
        while not self._stop.wait(self.interval_s):
            try:
                self.sample()
            except Exception:  # a stack that changed under us: skip this sample, never crash
                self.errors += 1

    def sample(self) -> None:
        """Read the stacks once; the time since the last sample goes to each of them."""
        frames = sys._current_frames()
        now = self.clock()
        elapsed, self._last = now - self._last, now
        if not self._record_caller(frames.get(self._target), elapsed):
            return
        import os

        if os.environ.get("TFDIAG_EXP_MAIN_ONLY"):
            return
        own = threading.get_ident()
        names = {t.ident: t.name for t in threading.enumerate()}
        for ident, frame in frames.items():
            if ident not in (self._target, own):
                codes = _codes(frame, None)
                if codes:
                    self._add(names.get(ident, "native thread"), codes, elapsed)

    def _record_caller(self, frame: FrameType | None, elapsed: float) -> bool:
        """Record the calling thread's stack; True when it is inside the call."""
        codes = _codes(frame, _LOOP_CODE)
        if codes is None:
            return False  # not inside tfdiag's loop: nothing of the call to record
        if not codes:
            self.outside_s += elapsed
            return False
        self._add("", codes, elapsed)
        return True

    def _add(self, thread: str, codes: tuple[CodeType, ...], elapsed: float) -> None:
        entry = self.stacks.setdefault((thread, codes), [0, 0.0])
        entry[0] += 1
        entry[1] += elapsed

    def record(self, iteration_s: tuple[float, ...]) -> SamplingRecord:
        """What was sampled, as a record (frames interned, stacks by time)."""
        index: dict[FrameKey, int] = {}
        threads: dict[str, int] = {"": 0}
        stacks = []
        for (thread, codes), (count, seconds) in self.stacks.items():
            ids = tuple(index.setdefault(_key(c), len(index)) for c in codes)
            tid = threads.setdefault(thread, len(threads))
            stacks.append(SampledStack(ids, int(count), seconds, tid))
        stacks.sort(key=lambda s: s.seconds, reverse=True)
        return SamplingRecord(
            interval_s=self.interval_s,
            iteration_s=iteration_s,
            frames=tuple(index),
            stacks=tuple(stacks),
            outside_s=self.outside_s,
            threads=tuple("MainThread" if name == "" else name for name in threads),
        )


def _codes(frame: FrameType | None, stop: CodeType | None) -> tuple[CodeType, ...] | None:
    """A stack's code objects root → leaf, cut below ``stop``; None when ``stop`` is given
    and not on the stack."""
    codes: list[CodeType] = []
    depth = 0
    while frame is not None and depth < _MAX_DEPTH:
        if type(frame) is not FrameType:  # another thread's stack moved while it was read
            return None
        code = frame.f_code
        if code is stop:
            return tuple(reversed(codes))
        codes.append(code)
        frame = frame.f_back
        depth += 1
    return None if stop is not None else tuple(reversed(codes))


def _key(code: CodeType) -> FrameKey:
    return (code.co_filename, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))


def start_sampler(
    interval_s: float = INTERVAL_S, clock: Clock = time.perf_counter
) -> ThreadSampler:
    """A running sampler.

    Raises:
        ProbeError: no thread could be started.
    """
    try:
        sampler = ThreadSampler(interval_s, clock)
        sampler.start()
    except RuntimeError as exc:
        raise ProbeError(f"the sampling thread could not start ({exc})") from None
    return sampler


def sampled_pass(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    n: int,
    interval_s: float = INTERVAL_S,
    *,
    clock: Clock = time.perf_counter,
) -> SamplingRecord:
    """Run ``fn`` ``n`` times with the sampler on; whatever ``fn`` raises propagates."""
    sampler = start_sampler(interval_s, clock)
    times: list[float] = []
    try:
        _calls(fn, args, kwargs, n, times, clock)
    finally:
        sampler.stop()
    return sampler.record(tuple(times))
