"""What a worker of a ``tf.distribute`` job records about its place in the job.

:class:`Distribution` travels in a profile report (``distribution`` in its JSON) when the
profiled ``fit`` ran under a strategy, or when a remote capture read one worker's trace:
the strategy, the cluster, this worker's task, the replicas in sync, and the cycle of its
steps measured two ways — from one batch's start to the next (``cycle_s``: what the job
runs at, the same on every synchronous worker) and inside the model's step function
(``step_fn_s``: input, compute and the wait in all-reduce). The rest of a cycle is the
Keras loop outside the step: callbacks, logs. Raw records only: ``tfdiag merge`` derives
the cross-worker view from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfdiag.records.errors import InputError
from tfdiag.records.fields import Obj, items, text, text_list

#: Batch cycles kept per worker (longer fits keep the first ones).
MAX_CYCLES = 10_000
#: The class names ``tf.distribute`` strategies have, by the name users write.
STRATEGY_NAMES = {
    "CollectiveAllReduceStrategy": "MultiWorkerMirroredStrategy",
    "CollectiveAllReduceStrategyV1": "MultiWorkerMirroredStrategy",
    "MirroredStrategyV1": "MirroredStrategy",
}


def strategy_name(class_name: str) -> str:
    """``CollectiveAllReduceStrategy`` → ``MultiWorkerMirroredStrategy``; others as they are."""
    return STRATEGY_NAMES.get(class_name, class_name)


@dataclass(frozen=True)
class Distribution:
    """One worker's place in a distributed job and its step cycle.

    Attributes:
        strategy: the strategy as users name it (``MultiWorkerMirroredStrategy``);
            ``""`` when unknown (a remote capture sees only the trace).
        task_type: ``worker``, ``chief``... (``None``: a single-process strategy).
        task_index: the task's index within its type.
        cluster: the cluster spec, ``(job name, addresses)`` pairs, as the worker saw it.
        num_replicas: replicas in sync over the whole job.
        devices: this worker's replica devices.
        cycle_s: from one batch's start to the next, for the batches timed with no profiler.
        step_fn_s: inside the model's step function, for the same batches.
        source: ``keras-callback`` or ``remote-capture``.
        address: the profiler address a remote capture read this worker from.
    """

    strategy: str
    task_type: str | None = None
    task_index: int | None = None
    cluster: tuple[tuple[str, tuple[str, ...]], ...] = ()
    num_replicas: int = 1
    devices: tuple[str, ...] = ()
    cycle_s: tuple[float, ...] = ()
    step_fn_s: tuple[float, ...] = ()
    source: str = "keras-callback"
    address: str = ""

    @property
    def rank(self) -> int:
        """The worker's place in the whole job: tasks of the cluster's jobs in order (a
        chief first, then the workers), 0 for a single-process strategy."""
        if self.task_type is None or self.task_index is None:
            return 0
        jobs = dict(self.cluster)
        order = sorted(jobs, key=lambda j: (j != "chief", j != "worker", j))
        before = 0
        for job in order:
            if job == self.task_type:
                return before + self.task_index
            before += len(jobs[job])
        return before + self.task_index

    @property
    def task(self) -> str:
        """``worker:1``; ``local`` for a single-process strategy."""
        if self.task_type is None:
            return "local"
        return f"{self.task_type}:{self.task_index}"

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "task_type": self.task_type,
            "task_index": self.task_index,
            "cluster": {job: list(addresses) for job, addresses in self.cluster},
            "num_replicas": self.num_replicas,
            "devices": list(self.devices),
            "cycle_s": list(self.cycle_s),
            "step_fn_s": list(self.step_fn_s),
            "source": self.source,
            "address": self.address,
        }

    @classmethod
    def from_json(cls, doc: Any) -> Distribution | None:
        """Read back what ``to_json`` wrote (``None`` stays ``None``).

        Raises:
            InputError: a field of the wrong type or out of range.
        """
        if doc is None:
            return None
        d = Obj(doc, "distribution")
        cluster = Obj(d.doc.get("cluster", {}), d.at("cluster"))
        jobs = []
        for job, addresses in cluster.doc.items():
            where = cluster.at(str(job))
            jobs.append(
                (
                    text(job, cluster.where),
                    text_list(items(addresses, where), f"{where}[]"),
                )
            )
        task_type = d.opt_text("task_type")
        task_index = d.opt_count("task_index", hi=1 << 20)
        if (task_type is None) != (task_index is None):
            raise InputError("not a valid result (distribution has a task type without an index)")
        return cls(
            strategy=d.text("strategy", ""),
            task_type=task_type,
            task_index=task_index,
            cluster=tuple(jobs),
            num_replicas=d.count("num_replicas", 1, lo=1, hi=1 << 24),
            devices=d.texts("devices"),
            cycle_s=d.series("cycle_s"),
            step_fn_s=d.series("step_fn_s"),
            source=d.text("source", "keras-callback"),
            address=d.text("address", ""),
        )
