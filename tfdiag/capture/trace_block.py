"""The traced block of the timed pass, for the three drivers: the running backend's tracer
(:data:`tfdiag.capture.tracers.TRACERS`: TensorFlow's profiler, ``jax.profiler``) over the
first few timed calls, stopped (its trace written) between two calls, outside any timing.

``profile()`` (:mod:`tfdiag.capture.observe`) opens it before its first timed call; the fit
callback and ``tfdiag run`` open it at the first call they trace (:meth:`TraceBlock.begin`).
Either way :meth:`TraceBlock.finish` ends it, always: a block left running (a call that
raised, a Ctrl-C) is aborted and its folder removed, and only a whole block is read.
"""

from __future__ import annotations

import math
import time
from contextlib import AbstractContextManager
from typing import Any

from tfdiag.capture.environment import running_backend
from tfdiag.capture.tfprofiler import TraceFiles
from tfdiag.capture.tracers import Tracer, tracer_for, tracer_name
from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.jax_profile import JaxProfile
from tfdiag.records.probes import Probes, TfProfile

#: The tracer traces at most this many steps (the TF guide: "no more than 10"; xprof's
#: reading grows with the trace, and 5 steps give the op shares: benchmarks/diagnosis_cost.py).
MAX_TRACED_STEPS = 5

#: What a block's trace reads as: TensorFlow's op figures or JAX's.
TraceRecord = TfProfile | JaxProfile


def traced_steps(n: int) -> int:
    """How many iterations the tracer traces before the ``n`` plain ones: at most half
    of ``n`` and at most :data:`MAX_TRACED_STEPS` (the plain ones measure its cost)."""
    return min(MAX_TRACED_STEPS, math.ceil(n / 2)) if n >= 2 else n


def _create() -> Tracer:
    """The running backend's tracer, not yet started (its own on Keras' JAX backend, where
    TensorFlow's would see none of the XLA ops; else TensorFlow's)."""
    return tracer_for(running_backend()).create()


def as_probes(record: TraceRecord | None, files: TraceFiles) -> Probes | None:
    """The report's ``probes`` for a block's record (None: nothing was read)."""
    if record is None:
        return None
    if isinstance(record, JaxProfile):
        return Probes(jax_profile=record, trace_files=files)
    return Probes(tf_profile=record, trace_files=files)


class TraceBlock:
    """The tracer over the next ``limit`` calls: ``begin()``/``end(seconds)`` around each
    (or ``open()``, ``step(i)`` around each and ``ran(times)``), ``finish()`` at the end,
    always (it stops a session still running). The trace is written (``stop``) as soon as
    the block is full, between two calls."""

    def __init__(self, *, limit: int = MAX_TRACED_STEPS, clock: Clock = time.perf_counter):
        self.limit = limit
        self.clock = clock
        self.notes: list[str] = []
        self.traced_s: list[float] = []
        self._trace: Tracer | None = None
        self._step: AbstractContextManager[Any] | None = None
        self._export_s: float | None = None
        #: ``TF profiler``, ``JAX profiler``: the tracer's name, once it is chosen.
        self.name = tracer_name(tracer_for(running_backend()))
        self.done = False
        self.spoiled = False

    @property
    def in_call(self) -> bool:
        """Whether a traced call is running now."""
        return self._step is not None

    @property
    def written(self) -> bool:
        """Whether the trace was written and waits to be read (:meth:`finish`)."""
        return self._trace is not None and self._export_s is not None

    def _note(self, exc: ProbeError) -> None:
        self.notes.append(f"{self.name} probe: {exc}")

    def spoil(self, note: str) -> None:
        """The trace holds what it should not (another thread's call): no more calls are
        traced, and :meth:`finish` drops it."""
        if not self.spoiled:
            self.spoiled = True
            self.notes.append(note)
        self.done = True

    def open(self) -> bool:
        """Start the tracer now (call it inside the block that calls :meth:`finish`); whether
        it runs. One that cannot start leaves a note and the block done."""
        if self.done:
            return False
        if self._trace is not None:
            return True
        try:
            trace = _create()
        except ProbeError as exc:
            self._note(exc)
            self.done = True
            return False
        self.name = tracer_name(type(trace))
        try:
            trace.begin()
        except ProbeError as exc:
            self._note(exc)
            self.done = True
            return False
        self._trace = trace
        return True

    def step(self, i: int) -> AbstractContextManager[Any]:
        """The tracer's marker around traced call ``i`` (after :meth:`open`)."""
        assert self._trace is not None
        return self._trace.step(i)

    def begin(self) -> bool:
        """A call starts: whether it runs under the tracer (it does until the block is full,
        once the tracer could start)."""
        if not self.open():
            return False
        self._step = self.step(len(self.traced_s))
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

    def ran(self, times: list[float]) -> None:
        """The block's calls (each in :meth:`step`) took ``times``: write the trace."""
        self.traced_s = list(times)
        self.close()

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
            self._note(exc)

    def finish(
        self, *, failed: bool = False, read: bool = True
    ) -> tuple[TraceRecord | None, TraceFiles]:
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
            self._note(exc)
            return None, ()
