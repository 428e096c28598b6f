"""The light probes over calls that someone else drives — the batches of a ``fit`` (the
Keras callback), the calls a script makes (``tfdiag run``): the TF profiler over a block
of them after the cProfile range and the Python-callback hook over the ones that run
without cProfile (the profiled ones are the capture session's, :mod:`tfdiag.capture.session`)."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

from tfdiag.capture.observe import MAX_TRACED_STEPS
from tfdiag.capture.pycalls import CallbackRecorder, install
from tfdiag.capture.tfprofiler import TfTrace, TraceFiles
from tfdiag.capture.tracers import BLOCK_TRACER, loaded, tracer_name
from tfdiag.records.callbacks import PyCallback
from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.probes import TfProfile


class BatchRecords(NamedTuple):
    """What the probes recorded."""

    tf_profile: TfProfile | None = None
    trace_files: TraceFiles = ()
    py_callbacks: tuple[PyCallback, ...] = ()


class TracedBlock:
    """The TF profiler over the next ``limit`` calls: ``begin()``/``end(seconds)`` around
    each, ``finish()`` at the end, always (it stops a session still running). The trace is
    written (``stop``) as soon as the block is full, between two calls."""

    def __init__(self, *, limit: int = MAX_TRACED_STEPS, clock: Clock = time.perf_counter):
        self.limit = limit
        self.clock = clock
        self.notes: list[str] = []
        self.traced_s: list[float] = []
        self._trace: TfTrace | None = None
        self._step: AbstractContextManager[Any] | None = None
        self._export_s: float | None = None
        self.done = False
        self.spoiled = False

    @property
    def in_call(self) -> bool:
        """Whether a traced call is running now."""
        return self._step is not None

    def spoil(self, note: str) -> None:
        """The trace holds what it should not (another thread's call): no more calls are
        traced, and :meth:`finish` drops it."""
        if not self.spoiled:
            self.spoiled = True
            self.notes.append(note)
        self.done = True

    def begin(self) -> bool:
        """A call starts: whether it runs under the TF profiler (it does until the block
        is full, once the profiler could start)."""
        if self.done:
            return False
        if self._trace is None:
            try:
                self._trace = BLOCK_TRACER.start()
            except ProbeError as exc:
                self.notes.append(f"{tracer_name(BLOCK_TRACER)} probe: {exc}")
                self.done = True
                return False
        self._step = self._trace.step(len(self.traced_s))
        self._step.__enter__()
        return True

    def end(self, seconds: float) -> None:
        """The traced call ended after ``seconds``."""
        if self._step is None or self._trace is None:
            return
        self._step.__exit__(None, None, None)
        self._step = None
        self.traced_s.append(seconds)
        if len(self.traced_s) >= self.limit:
            self._stop()

    def close(self) -> None:
        """No more calls: write the trace of those traced so far (between two calls)."""
        if not self.done and self._step is None:
            self._stop()

    def _stop(self) -> None:
        self.done = True
        if self._trace is None:
            return
        try:
            self._export_s = self._trace.stop(self.clock)
        except ProbeError as exc:
            self._trace.cleanup()
            self._trace = None
            self.notes.append(f"{tracer_name(BLOCK_TRACER)} probe: {exc}")

    def finish(
        self, *, failed: bool = False, read: bool = True
    ) -> tuple[TfProfile | None, TraceFiles]:
        """Stop the session; its record when it traced whole calls and ``read`` is asked
        (a failed run's or an unwanted trace is dropped)."""
        self.done = True
        trace, self._trace = self._trace, None
        if trace is None:
            return None, ()
        if self._step is not None:  # a call that never ended: its trace is incomplete
            self._step = None
            failed = True
        if failed or self.spoiled or not read or not self.traced_s:
            trace.abort()
            return None, ()
        try:
            if self._export_s is None:
                self._export_s = trace.stop(self.clock)
            return trace.read(self.traced_s, self._export_s)
        except ProbeError as exc:
            trace.cleanup()
            self.notes.append(f"{tracer_name(BLOCK_TRACER)} probe: {exc}")
            return None, ()


class BatchProbes:
    """The probes over one ``fit``: ``start()`` when it starts; ``pause()``/``resume()``
    around the cProfile range; ``begin()``/``end(seconds)`` around each batch after it (the
    first :data:`MAX_TRACED_STEPS` are TF-profiled); ``finish()`` at the end, always, which
    stops whatever still runs."""

    def __init__(self, *, tf_profiler: bool | None, clock: Clock = time.perf_counter) -> None:
        self.want_tf = loaded(BLOCK_TRACER) if tf_profiler is None else tf_profiler
        self.callbacks = CallbackRecorder(clock)
        self.block = TracedBlock(clock=clock)
        self.block.done = not self.want_tf
        self._restore: Any = None

    @property
    def notes(self) -> list[str]:
        return self.block.notes

    def start(self) -> None:
        self._restore = install(self.callbacks)

    def pause(self) -> None:
        self.callbacks.active = False

    def resume(self) -> None:
        self.callbacks.active = True

    def begin(self) -> bool:
        """A batch after the profiled range starts: whether it is TF-profiled."""
        return self.block.begin()

    def end(self, seconds: float) -> None:
        self.block.end(seconds)

    def finish(self, *, failed: bool) -> BatchRecords:
        """Stop everything; the TF profiler's record when it traced a whole batch."""
        if self._restore is not None:
            self._restore()
            self._restore = None
        record, files = self.block.finish(failed=failed)
        return BatchRecords(record, files, self.callbacks.records())
