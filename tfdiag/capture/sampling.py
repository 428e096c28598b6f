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
    after: Callable[[], None] | None = None,
) -> None:
    """The loop the sampler recognises as tfdiag's own frame (the stack is cut below it).

    ``step(i)``, when given, wraps call ``i`` (the TF profiler's step marker); ``after()``
    follows each call, outside its timing (a progress bar's update: :func:`_after`, whose
    samples count as outside the call).
    """
    for i in range(n):
        around = step(i) if step is not None else nullcontext()
        t0 = clock()
        with around:
            fn(*args, **kwargs)
        out.append(clock() - t0)
        if after is not None:
            _after(after)


def _after(after: Callable[[], None]) -> None:
    after()


_LOOP_CODE = _calls.__code__
_AFTER_CODE = _after.__code__


class ThreadSampler:
    """Samples the calling thread's stack from a daemon thread; ``stop()`` always joins it.

    Only the caller's own stack is read: on Python 3.11, walking the frames of threads
    that enter and leave Python (tf.data's, TF's executor's) from another thread is known
    to read freed frames (python/cpython#99110, DataDog/dd-trace-py#13567), and the
    TF profiler and the Python-callback hook see those threads safely.
    """

    def __init__(self, interval_s: float = INTERVAL_S, clock: Clock = time.perf_counter) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self._last = clock()
        #: codes root → leaf → [samples, seconds]
        self.stacks: dict[tuple[CodeType, ...], list[float]] = {}
        self.outside_s = 0.0
        #: Samples skipped because a stack could not be read.
        self.errors = 0
        self._target = threading.get_ident()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tfdiag-sampler", daemon=True)
        self._cpu0: float | None = None

    def start(self) -> None:
        self._cpu0 = time.process_time()
        self._thread.start()

    def stop(self) -> None:
        """Stop and join the thread; safe to call whether or not ``start()`` got far (a
        thread that started but was not yet seen as started ends at its first wait)."""
        self._stop.set()
        try:
            self._thread.join()
        except RuntimeError:  # never started, or start() interrupted before it returned
            pass

    def _run(self) -> None:
        self._last = self.clock()
        while not self._stop.wait(self.interval_s):
            try:
                self.sample()
            except Exception:  # a stack that changed under us: skip this sample, never crash
                self.errors += 1

    def sample(self) -> None:
        """Read the calling thread's stack once; the time since the last sample goes to it."""
        frame = sys._current_frames().get(self._target)
        now = self.clock()
        elapsed, self._last = now - self._last, now
        codes = _codes(frame, _LOOP_CODE)
        if codes is None:
            return  # not inside tfdiag's loop: nothing of the call to record
        if not codes or codes[0] is _AFTER_CODE:  # between two calls
            self.outside_s += elapsed
            return
        entry = self.stacks.setdefault(codes, [0, 0.0])
        entry[0] += 1
        entry[1] += elapsed

    def record(self, iteration_s: tuple[float, ...]) -> SamplingRecord:
        """What was sampled, as a record (frames interned, stacks by time)."""
        index: dict[FrameKey, int] = {}
        stacks = []
        for codes, (count, seconds) in self.stacks.items():
            ids = tuple(index.setdefault(_key(c), len(index)) for c in codes)
            stacks.append(SampledStack(ids, int(count), seconds))
        stacks.sort(key=lambda s: s.seconds, reverse=True)
        return SamplingRecord(
            interval_s=self.interval_s,
            iteration_s=iteration_s,
            frames=tuple(index),
            stacks=tuple(stacks),
            outside_s=self.outside_s,
            cpu_s=None if self._cpu0 is None else max(time.process_time() - self._cpu0, 0.0),
        )


def _codes(frame: FrameType | None, stop: CodeType) -> tuple[CodeType, ...] | None:
    """A stack's code objects root → leaf, cut below ``stop``; None when ``stop`` is not
    on it (or the stack changed while it was read)."""
    codes: list[CodeType] = []
    depth = 0
    while frame is not None and depth < _MAX_DEPTH:
        if type(frame) is not FrameType:  # the stack changed while it was read
            return None
        code = frame.f_code
        if code is stop:
            return tuple(reversed(codes))
        codes.append(code)
        frame = frame.f_back
        depth += 1
    return None


def _key(code: CodeType) -> FrameKey:
    return (code.co_filename, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))


def start_sampler(
    interval_s: float = INTERVAL_S, clock: Clock = time.perf_counter
) -> ThreadSampler:
    """A running sampler (a caller that must stop it whatever happens makes a
    :class:`ThreadSampler` first and calls :func:`start` inside its ``try``).

    Raises:
        ProbeError: no thread could be started.
    """
    sampler = ThreadSampler(interval_s, clock)
    start(sampler)
    return sampler


def start(sampler: ThreadSampler) -> None:
    """Start its thread; a Ctrl-C as it starts stops it again.

    Raises:
        ProbeError: no thread could be started.
    """
    try:
        sampler.start()
    except RuntimeError as exc:
        raise ProbeError(f"the sampling thread could not start ({exc})") from None
    except BaseException:
        sampler.stop()
        raise


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
    sampler = ThreadSampler(interval_s, clock)
    times: list[float] = []
    try:
        start(sampler)
        _calls(fn, args, kwargs, n, times, clock)
    finally:
        sampler.stop()
    return sampler.record(tuple(times))
