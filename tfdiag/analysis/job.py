"""The cross-worker view of a ``tf.distribute`` job, from its merged record: each worker's
step split into its parts, the spread of step times, and how long each worker waits for
the others.

In synchronous training (MultiWorkerMirroredStrategy, MirroredStrategy) every step ends in
an all-reduce, so every worker runs at the pace of the slowest: the step times hardly
differ, and what tells the workers apart is what fills them. A worker that waits is in
its collectives longer; the one it waits for does its own work (input, compute, a
callback) for longer and arrives last. A worker's *own work* is its step less that wait.

Pure functions, no TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfdiag.records.job import JobRecord, WorkerRecord
from tfdiag.records.numbers import median


@dataclass(frozen=True)
class StepSplit:
    """One worker's median step (``step_s``, start to start) in parts that sum to it.

    ``callbacks_s`` is the cycle outside the step function (callbacks, logs, the Keras
    loop). Inside it, with the TF profiler: ``input_s`` (waiting for the next batch),
    ``compute_s`` (the model's ops), ``collective_s`` (all-reduce and friends, waiting for
    the other workers included) and ``other_s`` (the rest: framework, Python); these are
    measured on the traced steps and scaled to fit the step function's median when they
    overrun it. Without it the step function is one part (``other_s``) and those are None.
    """

    step_s: float
    callbacks_s: float
    input_s: float | None
    compute_s: float | None
    collective_s: float | None
    other_s: float

    @property
    def measured(self) -> bool:
        return self.collective_s is not None

    def share(self, part: float | None) -> float | None:
        return None if part is None else (part / self.step_s if self.step_s > 0 else 0.0)


def split_of(w: WorkerRecord) -> StepSplit:
    fn = min(w.step_fn_s, w.step_s)
    callbacks = w.step_s - fn
    if w.collective_s is None:
        return StepSplit(w.step_s, callbacks, None, None, None, fn)
    parts = [w.input_s or 0.0, w.compute_s or 0.0, w.collective_s]
    total = sum(parts)
    scale = fn / total if total > fn > 0 else 1.0 if total <= fn else 0.0
    inp, comp, coll = (p * scale for p in parts)
    return StepSplit(w.step_s, callbacks, inp, comp, coll, max(fn - inp - comp - coll, 0.0))


@dataclass(frozen=True)
class Wait:
    """How long a worker waits for the others per step, and its own work (step − wait).

    ``measured``: the wait is its time in collective ops (TF profiler on every worker);
    else it is estimated as its step function's excess over the shortest one (an input
    or compute straggler then cannot be told apart: all step functions wait as long).
    """

    wait_s: float
    own_s: float
    measured: bool


def waits(record: JobRecord) -> dict[int, Wait]:
    splits = {w.index: split_of(w) for w in record.workers}
    measured = all(s.measured for s in splits.values())
    shortest = min(min(w.step_fn_s, w.step_s) for w in record.workers)
    out = {}
    for w in record.workers:
        s = splits[w.index]
        if measured:
            assert s.collective_s is not None
            wait = s.collective_s
        else:
            wait = min(w.step_fn_s, w.step_s) - shortest
        out[w.index] = Wait(wait, max(s.step_s - wait, 0.0), measured)
    return out


@dataclass(frozen=True)
class Spread:
    """The workers' median step times: the fastest, the median, the slowest."""

    fastest_s: float
    median_s: float
    slowest_s: float

    @property
    def spread(self) -> float:
        """(slowest − fastest) / median: near 0 in synchronous training."""
        return (self.slowest_s - self.fastest_s) / self.median_s if self.median_s > 0 else 0.0


def spread_of(record: JobRecord) -> Spread:
    steps = [w.step_s for w in record.workers]
    return Spread(min(steps), median(steps) or 0.0, max(steps))


#: The parts of a step a straggler can be slow on, in the order they are named.
PARTS = ("input", "callback", "compute")


def part_s(w: WorkerRecord, wait: Wait, part: str) -> float | None:
    """The seconds of one part of a worker's own work (``None``: not measured)."""
    s = split_of(w)
    if part == "callback":
        return s.callbacks_s
    if part == "input":
        return s.input_s
    if s.compute_s is not None:
        return s.compute_s + s.other_s
    # no TF profiler: the step function's own share, input included
    return max(min(w.step_fn_s, w.step_s) - wait.wait_s, 0.0)
