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
from types import CodeType, FrameType
from typing import Any

from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.probes import FrameKey, SampledStack, SamplingRecord

#: Seconds between samples: 5 ms keeps the pass within 1.1× (docs/probes.md).
INTERVAL_S = 0.005
_MAX_DEPTH = 512


def _calls(
    fn: Callable[..., Any], args: Any, kwargs: Any, n: int, out: list[float], clock: Clock
) -> None:
    """The loop the sampler recognises as tfdiag's own frame (the stack is cut below it)."""
    for _ in range(n):
        t0 = clock()
        fn(*args, **kwargs)
        out.append(clock() - t0)


_LOOP_CODE = _calls.__code__


class ThreadSampler:
    """Samples one thread's stack from a daemon thread; ``stop()`` always joins it."""

    def __init__(self, interval_s: float = INTERVAL_S, clock: Clock = time.perf_counter) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self._last = clock()
        self.stacks: dict[tuple[CodeType, ...], list[float]] = {}
        self.outside_s = 0.0
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
            self.sample()

    def sample(self) -> None:
        """Read the target thread's stack once; the time since the last sample goes to it."""
        frame = sys._current_frames().get(self._target)
        now = self.clock()
        elapsed, self._last = now - self._last, now
        self._record(frame, elapsed)

    def _record(self, frame: FrameType | None, elapsed: float) -> None:
        codes: list[CodeType] = []
        depth = 0
        while frame is not None and depth < _MAX_DEPTH:
            if frame.f_code is _LOOP_CODE:
                break
            codes.append(frame.f_code)
            frame = frame.f_back
            depth += 1
        else:
            return  # not inside tfdiag's loop: nothing of the call to record
        if not codes:
            self.outside_s += elapsed
            return
        entry = self.stacks.setdefault(tuple(reversed(codes)), [0, 0.0])
        entry[0] += 1
        entry[1] += elapsed


def _key(code: CodeType) -> FrameKey:
    return (code.co_filename, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))


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
    try:
        sampler = ThreadSampler(interval_s, clock)
        sampler.start()
    except RuntimeError as exc:  # no thread could be started
        raise ProbeError(f"the sampling thread could not start ({exc})") from None
    times: list[float] = []
    try:
        _calls(fn, args, kwargs, n, times, clock)
    finally:
        sampler.stop()
    index: dict[FrameKey, int] = {}
    stacks = []
    for codes, (count, seconds) in sampler.stacks.items():
        ids = tuple(index.setdefault(_key(c), len(index)) for c in codes)
        stacks.append(SampledStack(ids, int(count), seconds))
    stacks.sort(key=lambda s: s.seconds, reverse=True)
    return SamplingRecord(
        interval_s=interval_s,
        iteration_s=tuple(times),
        frames=tuple(index),
        stacks=tuple(stacks),
        outside_s=sampler.outside_s,
    )
