"""The light probes over batches that someone else drives (the Keras callback inside a
``fit``): the TF profiler over a block of batches after the cProfile range, the
Python-callback hook over every batch that runs without cProfile, and the trace recorder
over the whole fit (kept for the profiled batches)."""

from __future__ import annotations

import sys
import time
from contextlib import AbstractContextManager, ExitStack
from typing import Any, NamedTuple

from tfdiag.capture.observe import MAX_TRACED_STEPS
from tfdiag.capture.pycalls import CallbackRecorder, install
from tfdiag.capture.tfprofiler import TfTrace, TraceFiles
from tfdiag.capture.traces import TraceRecorder, recording
from tfdiag.records.callbacks import PyCallback
from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.probes import TfProfile
from tfdiag.records.traces import TraceEvent


class BatchRecords(NamedTuple):
    """What the probes recorded over a fit."""

    tf_profile: TfProfile | None = None
    trace_files: TraceFiles = ()
    py_callbacks: tuple[PyCallback, ...] = ()


class BatchProbes:
    """``start()`` when the fit starts; ``pause()``/``resume()`` around the cProfile range;
    ``begin()``/``end(seconds)`` around each batch after it (the first
    :data:`~tfdiag.capture.observe.MAX_TRACED_STEPS` are TF-profiled); ``finish()`` at the
    end, always, which stops whatever still runs."""

    def __init__(self, *, tf_profiler: bool | None, clock: Clock = time.perf_counter) -> None:
        self.want_tf = "tensorflow" in sys.modules if tf_profiler is None else tf_profiler
        self.clock = clock
        self.notes: list[str] = []
        self.callbacks = CallbackRecorder(clock)
        self.traces = TraceRecorder()
        self._stack = ExitStack()
        self._restore: Any = None
        self._trace: TfTrace | None = None
        self._step: AbstractContextManager[Any] | None = None
        self._traced_s: list[float] = []
        self._export_s: float | None = None
        self._done = False

    def start(self) -> None:
        self._restore = install(self.callbacks)
        self._stack.enter_context(recording(self.traces))

    def batch(self, i: int) -> None:
        """Batch ``i`` of the profiled range starts (0: the cold one; negative: before)."""
        self.traces.call = i

    def pause(self) -> None:
        self.callbacks.active = False

    def resume(self) -> None:
        self.callbacks.active = True

    def begin(self) -> bool:
        """A batch after the profiled range starts: whether it runs under the TF profiler
        (the first :data:`MAX_TRACED_STEPS` do, when it can start)."""
        if not self.want_tf or self._done:
            return False
        if self._trace is None:
            try:
                self._trace = TfTrace.start()
            except ProbeError as exc:
                self.notes.append(f"TF profiler probe: {exc}")
                self._done = True
                return False
        self._step = self._trace.step(len(self._traced_s))
        self._step.__enter__()
        return True

    def end(self, seconds: float) -> None:
        """The traced batch ended after ``seconds``."""
        if self._step is None or self._trace is None:
            return
        self._step.__exit__(None, None, None)
        self._step = None
        self._traced_s.append(seconds)
        if len(self._traced_s) >= MAX_TRACED_STEPS:
            self._stop()

    def _stop(self) -> None:
        self._done = True
        if self._trace is None:
            return
        try:
            self._export_s = self._trace.stop(self.clock)
        except ProbeError as exc:
            self._trace.cleanup()
            self._trace = None
            self.notes.append(f"TF profiler probe: {exc}")

    def traced_in(self, profiled: int) -> tuple[TraceEvent, ...]:
        """The graph traces of the ``profiled`` batches of the cProfile range."""
        return tuple(e for e in self.traces.events if 0 <= e.call < profiled)

    def finish(self, *, failed: bool) -> BatchRecords:
        """Stop everything; the TF profiler's record when it traced a whole batch."""
        self._stack.close()
        if self._restore is not None:
            self._restore()
            self._restore = None
        record: TfProfile | None = None
        files: TraceFiles = ()
        if self._trace is not None:
            if self._step is not None:  # a batch that never ended: its trace is incomplete
                self._step = None
                failed = True
            if failed or not self._traced_s:
                self._trace.abort()
            else:
                if self._export_s is None:
                    self._stop()
                if self._trace is not None and self._export_s is not None:
                    try:
                        record, files = self._trace.read(self._traced_s, self._export_s)
                    except ProbeError as exc:
                        self.notes.append(f"TF profiler probe: {exc}")
            self._trace = None
        return BatchRecords(record, files, self.callbacks.records())
