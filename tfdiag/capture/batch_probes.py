"""The timed pass over the batches of a ``fit`` (the Keras callback): the timed probes
(:mod:`tfdiag.capture.timed`) over the batches timed with no profiler attached, and the
traced block (:mod:`tfdiag.capture.trace_block`: the running backend's tracer) over a
block of them after the cProfile range (the profiled ones are the capture session's,
:mod:`tfdiag.capture.session`)."""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from tfdiag.capture.tfprofiler import TraceFiles
from tfdiag.capture.timed import TimedContext, TimedProbes
from tfdiag.capture.trace_block import TraceBlock, TraceRecord
from tfdiag.capture.tracers import tracer_in_use
from tfdiag.records.clock import Clock


class BatchRecords(NamedTuple):
    """What the probes recorded: the block's trace, and the timed probes' records by
    report field."""

    trace: TraceRecord | None = None
    trace_files: TraceFiles = ()
    timed: dict[str, Any] | None = None


class BatchProbes:
    """The probes over one ``fit``: ``start()`` when it starts; ``pause()``/``resume()``
    around the cProfile range; ``timed_begin(i)``/``timed_end(i)`` around each timeline
    batch; ``begin()``/``end(seconds)`` around each batch after the range (the first few are
    traced); ``finish()`` at the end, always, which stops whatever still runs."""

    def __init__(self, *, tf_profiler: bool | None, clock: Clock = time.perf_counter) -> None:
        self.want_trace = tracer_in_use() is not None if tf_profiler is None else tf_profiler
        self.timed = TimedProbes(TimedContext(clock=clock))
        self.block = TraceBlock(clock=clock)
        self.block.done = not self.want_trace

    @property
    def notes(self) -> list[str]:
        return [*self.block.notes, *self.timed.notes]

    def start(self) -> None:
        self.timed.start()

    def pause(self) -> None:
        self.timed.pause(True)

    def resume(self) -> None:
        self.timed.pause(False)

    def timed_begin(self, i: int) -> None:
        """Timeline batch ``i`` starts (Keras ran its own code since the last one ended)."""
        self.timed.before_call(i)

    def timed_end(self, i: int) -> None:
        self.timed.after_call(i)

    def begin(self) -> bool:
        """A batch after the profiled range starts: whether it is traced."""
        return self.block.begin()

    def end(self, seconds: float) -> None:
        self.block.end(seconds)

    def finish(self, *, failed: bool) -> BatchRecords:
        """Stop everything; the tracer's record when it traced a whole batch."""
        try:
            self.timed.stop()
        finally:  # a Ctrl-C as the hook comes off still stops the tracer
            record, files = self.block.finish(failed=failed)
        return BatchRecords(record, files, self.timed.records())
