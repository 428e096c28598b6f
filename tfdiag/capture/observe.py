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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfdiag.capture.sampling import _calls
from tfdiag.capture.tfprofiler import TraceFiles
from tfdiag.capture.timed import TimedContext, TimedProbes
from tfdiag.capture.trace_block import MAX_TRACED_STEPS, TraceBlock, traced_steps
from tfdiag.records.clock import Clock
from tfdiag.records.jax_profile import JaxProfile
from tfdiag.records.probes import TfProfile

#: The label of the step that reads the TF profiler's trace (the progress callback's).
READING = "reading the TF profile"

__all__ = ["MAX_TRACED_STEPS", "READING", "Observation", "observe", "traced_steps"]


@dataclass
class Observation:
    """What the observe pass measured so far (complete when :func:`observe` returns)."""

    times: list[float] = field(default_factory=list)
    traced: int = 0
    tf_profile: TfProfile | None = None
    #: On Keras' JAX backend the traced block's record (``jax.profiler``) instead.
    jax_profile: JaxProfile | None = None
    trace_files: TraceFiles = ()
    #: The timed probes' records (:data:`~tfdiag.capture.timed.TIMED_PROBES`), by report
    #: field: ``py_callbacks``, ``machine``, ``sampling`` when asked for.
    timed: dict[str, Any] = field(default_factory=dict)
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
    timed = TimedProbes(TimedContext(clock=clock, times=out.times, sampling=sampling))
    block = TraceBlock(limit=traced_steps(n), clock=clock) if tf_profiler else None

    def after() -> None:
        timed.after_call(len(out.times) - 1)
        if tick is not None:
            tick("timed")

    try:  # every probe starts inside the block that stops it: a Ctrl-C as they start too
        timed.start()
        out.notes.extend(timed.notes)
        if block is not None and block.open():
            out.traced = block.limit
            _calls(fn, args, kwargs, out.traced, out.times, clock, step=block.step, after=after)
            block.ran(out.times[: out.traced])  # written now, between two calls
        # n plain calls after the traced block: the traced ones are extra, so the timeline
        # and the median read all n the user asked for
        plain = n - (len(out.times) - out.traced)
        _calls(fn, args, kwargs, plain, out.times, clock, after=after)
    except BaseException:
        if block is not None:  # its trace, written or not, is never read: removed
            block.finish(failed=True)
        raise
    finally:
        timed.stop()
        out.timed = timed.records()
    if block is not None:
        if block.written and tick is not None:
            tick(READING)
        record, files = block.finish()
        if isinstance(record, JaxProfile):
            out.jax_profile, out.trace_files = record, files
        elif record is not None:
            out.tf_profile, out.trace_files = record, files
        out.notes.extend(block.notes)
    return out
