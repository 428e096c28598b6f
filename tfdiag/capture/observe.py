"""The observe pass: the iterations timed without cProfile, watched by the light probes.

Every thread's Python stack is sampled throughout (a GIL hand-over per sample, no
per-call hook), and the first block of iterations runs under the TF profiler, which
sees what no Python profiler can: tf.data's threads, ops that call back into Python,
the caller waiting for input, the model's own op time. The profiler is stopped (its
trace written) between two iterations, outside any timing, so the rest of the pass
is timed with the sampler alone; the two blocks' medians give the TF profiler's cost.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfdiag.capture.sampling import _calls, start_sampler
from tfdiag.capture.tfprofiler import TfTrace, TraceFiles
from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.probes import SamplingRecord, TfProfile

#: The TF profiler traces at most this many steps (the TF guide: "no more than 10").
MAX_TRACED_STEPS = 10


def traced_steps(n: int) -> int:
    """How many of ``n`` observed iterations the TF profiler traces: at most half, so the
    rest measure its cost, and at most :data:`MAX_TRACED_STEPS`."""
    return min(MAX_TRACED_STEPS, math.ceil(n / 2)) if n >= 2 else n


@dataclass
class Observation:
    """What the observe pass measured so far (complete when :func:`observe` returns)."""

    times: list[float] = field(default_factory=list)
    traced: int = 0
    sampling: SamplingRecord | None = None
    tf_profile: TfProfile | None = None
    trace_files: TraceFiles = ()
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
) -> Observation:
    """Run ``fn`` ``n`` times, timed, with the probes asked for.

    A probe that cannot run leaves a note and the pass goes on without it; whatever
    ``fn`` raises propagates with every probe stopped. ``into`` receives the times as they
    are measured (what an interrupted run keeps).
    """
    out = into if into is not None else Observation()
    sampler = None
    if sampling:
        try:
            sampler = start_sampler(clock=clock)
        except ProbeError as exc:
            out.notes.append(f"sampling probe: {exc}")
    trace = None
    if tf_profiler:
        try:
            trace = TfTrace.start()
        except ProbeError as exc:
            out.notes.append(f"TF profiler probe: {exc}")
    export_s: float | None = None
    try:
        if trace is not None:
            out.traced = traced_steps(n)
            try:
                _calls(fn, args, kwargs, out.traced, out.times, clock, step=trace.step)
            except BaseException:
                trace.abort()
                raise
            try:
                export_s = trace.stop(clock)
            except ProbeError as exc:
                trace.cleanup()
                out.notes.append(f"TF profiler probe: {exc}")
        _calls(fn, args, kwargs, n - len(out.times), out.times, clock)
    finally:
        if sampler is not None:
            sampler.stop()
            out.sampling = sampler.record(tuple(out.times))
    if trace is not None and export_s is not None:
        try:
            out.tf_profile, out.trace_files = trace.read(out.times[: out.traced], export_s)
        except ProbeError as exc:
            out.notes.append(f"TF profiler probe: {exc}")
    return out
