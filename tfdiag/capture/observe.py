"""The observe pass: the iterations timed without cProfile, watched by the light probes.

The first block of iterations runs under the TF profiler (on Keras' JAX backend under
``jax.profiler``, :mod:`tfdiag.capture.jax_profiler`), which sees what no Python
profiler can: tf.data's threads, ops that call back into Python, the caller waiting for
input, the model's own op time. The profiler is stopped (its trace written) between two
iterations, outside any timing, so the rest of the pass is timed without it; the two
blocks' medians give its cost. Throughout, every call TensorFlow makes back into Python
(``py_function``, ``numpy_function``, a generator) is timed by the callback hook, and,
when asked for, the caller's stack is sampled.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfdiag.capture.environment import running_backend
from tfdiag.capture.machine import LoadProbe
from tfdiag.capture.pycalls import CallbackRecorder, hooked
from tfdiag.capture.sampling import ThreadSampler, _calls, start
from tfdiag.capture.tfprofiler import TraceFiles
from tfdiag.capture.tracers import Tracer, tracer_for, tracer_name
from tfdiag.records.callbacks import PyCallback
from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.jax_profile import JaxProfile
from tfdiag.records.machine import MachineLoad
from tfdiag.records.probes import SamplingRecord, TfProfile

#: The label of the step that reads the TF profiler's trace (the progress callback's).
READING = "reading the TF profile"

#: The TF profiler traces at most this many steps (the TF guide: "no more than 10"; xprof's
#: reading grows with the trace, and 5 steps give the op shares: benchmarks/diagnosis_cost.py).
MAX_TRACED_STEPS = 5


def traced_steps(n: int) -> int:
    """How many iterations the TF profiler traces before the ``n`` plain ones: at most half
    of ``n`` and at most :data:`MAX_TRACED_STEPS` (the plain ones measure its cost)."""
    return min(MAX_TRACED_STEPS, math.ceil(n / 2)) if n >= 2 else n


@dataclass
class Observation:
    """What the observe pass measured so far (complete when :func:`observe` returns)."""

    times: list[float] = field(default_factory=list)
    traced: int = 0
    sampling: SamplingRecord | None = None
    tf_profile: TfProfile | None = None
    #: On Keras' JAX backend the traced block's record (``jax.profiler``) instead.
    jax_profile: JaxProfile | None = None
    trace_files: TraceFiles = ()
    py_callbacks: tuple[PyCallback, ...] = ()
    machine: MachineLoad | None = None
    notes: list[str] = field(default_factory=list)


def observe(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    n: int,
    *,
    sampling: bool,
    tf_profiler: bool,
    clock: Clock,
    into: Observation | None = None,
    tick: Callable[[str], None] | None = None,
) -> Observation:
    """Run ``fn`` ``n`` times, timed, with the probes asked for.

    A probe that cannot run leaves a note and the pass goes on without it; whatever
    ``fn`` raises propagates with every probe stopped. ``into`` receives the times as they
    are measured (what an interrupted run keeps). ``tick("timed")`` follows each call,
    outside its timing; ``tick(READING)`` comes before the trace is read.
    """
    out = into if into is not None else Observation()
    sampler = ThreadSampler(clock=clock) if sampling else None
    trace: Tracer | None = None
    export_s: float | None = None
    callbacks = CallbackRecorder(clock)
    load = LoadProbe()

    def after() -> None:
        load.tick()
        if tick is not None:
            tick("timed")

    try:  # both probes start inside the block that stops them: a Ctrl-C as they start too
        if sampler is not None:
            try:
                start(sampler)
            except ProbeError as exc:
                out.notes.append(f"sampling probe: {exc}")
                sampler = None
        trace = _trace(out) if tf_profiler else None
        if trace is not None:
            try:
                trace.begin()
            except ProbeError as exc:
                out.notes.append(f"{_name(trace)} probe: {exc}")
                trace = None
        with hooked(callbacks):
            _timed_block(fn, args, kwargs, n, clock, trace, out, after)
            if out.traced and trace is not None and trace.running:
                export_s = _stop_trace(trace, clock, out)
            # n plain calls after the traced block: the traced ones are extra, so the timeline
            # and the median read all n the user asked for
            plain = n - (len(out.times) - out.traced)
            _calls(fn, args, kwargs, plain, out.times, clock, after=after)
    except BaseException:
        if trace is not None:  # its trace, written or not, is never read: remove it
            trace.abort()
        raise
    finally:
        out.py_callbacks = callbacks.records()
        out.machine = load.record()
        if sampler is not None:
            sampler.stop()
            out.sampling = sampler.record(tuple(out.times))
    if trace is not None and export_s is not None:
        if tick is not None:
            tick(READING)
        try:
            record, out.trace_files = trace.read(out.times[: out.traced], export_s)
        except ProbeError as exc:
            out.notes.append(f"{_name(trace)} probe: {exc}")
        else:
            if isinstance(record, JaxProfile):
                out.jax_profile = record
            else:
                out.tf_profile = record
    return out


def _timed_block(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    n: int,
    clock: Clock,
    trace: Tracer | None,
    out: Observation,
    after: Callable[[], None] | None,
) -> None:
    """The first block of the pass, under the TF profiler when it started."""
    if trace is None:
        return
    out.traced = traced_steps(n)
    try:
        _calls(fn, args, kwargs, out.traced, out.times, clock, step=trace.step, after=after)
    except BaseException:
        trace.abort()
        raise


def _trace(out: Observation) -> Tracer | None:
    """The block's profiler: the backend's own (:data:`~tfdiag.capture.tracers.TRACERS`;
    on Keras' JAX backend TensorFlow's would see none of its XLA ops, and is never started
    there), else TensorFlow's."""
    tracer = tracer_for(running_backend())
    try:
        return tracer.create()
    except ProbeError as exc:
        out.notes.append(f"{tracer_name(tracer)} probe: {exc}")
        return None


def _name(trace: Tracer) -> str:
    return tracer_name(type(trace))


def _stop_trace(trace: Tracer, clock: Clock, out: Observation) -> float | None:
    try:
        return trace.stop(clock)
    except ProbeError as exc:
        trace.cleanup()
        out.notes.append(f"{_name(trace)} probe: {exc}")
        return None
