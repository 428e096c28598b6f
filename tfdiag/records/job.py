"""The merged record of a ``tf.distribute`` job: one :class:`WorkerRecord` per worker report.

Each worker's entry keeps what ``tfdiag merge`` read off its report — its task, its step
cycle (medians), the TF profiler's per-step figures (input wait, the model's ops,
collectives) and its own findings — so a saved merge re-renders (``explain``) without
the worker reports. The cross-worker view (spread, the split of each step, ``straggler``,
``communication-bound``) is derived on demand (:mod:`tfdiag.analysis.job`,
:mod:`tfdiag.advise.job`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from tfdiag.records.errors import InputError
from tfdiag.records.fields import Obj, items, row, seconds, text
from tfdiag.records.report import SCHEMA_VERSION

#: Workers in one merge.
MAX_WORKERS = 4096


@dataclass(frozen=True)
class WorkerFinding:
    """One of a worker's own findings, as its report gave it."""

    id: str
    title: str
    severity: str
    impact: float
    evidence: tuple[str, ...]
    fix: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "severity": self.severity,
            "impact": self.impact,
            "evidence": list(self.evidence),
            "fix": self.fix,
        }

    @classmethod
    def from_json(cls, doc: Any, where: str) -> WorkerFinding:
        d = Obj(doc, where)
        return cls(
            id=d.text("id"),
            title=d.text("title", ""),
            severity=d.text("severity", "low"),
            impact=d.seconds("impact", 0.0, hi=1.0),
            evidence=d.texts("evidence"),
            fix=d.text("fix", ""),
        )


@dataclass(frozen=True)
class WorkerRecord:
    """One worker of the job, as read from its report (per-step figures are seconds).

    Attributes:
        index: its place in the job (chief first, then the workers; a worker-only cluster:
            its task index).
        task: ``worker:1`` (``local`` for a single-process strategy).
        source: the report's file name, or the address a capture read.
        step_s: the median batch cycle, start to start: the pace of the job.
        step_fn_s: the median time inside the model's step function.
        input_s / compute_s / collective_s: per traced step (TF profiler): waiting for
            input, the model's own ops, collective ops; ``None`` without the TF profiler.
        collective_ops: ``(op type, seconds per step)``, by time.
    """

    index: int
    task: str
    strategy: str
    cluster: tuple[tuple[str, tuple[str, ...]], ...]
    num_replicas: int
    source: str
    flavour: str
    step_s: float
    step_fn_s: float
    steps: int
    step_iqr_s: float | None = None
    input_s: float | None = None
    compute_s: float | None = None
    collective_s: float | None = None
    traced_steps: int = 0
    collective_ops: tuple[tuple[str, float], ...] = ()
    findings: tuple[WorkerFinding, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def outside_s(self) -> float:
        """A cycle outside the step function: callbacks, logs, the Keras loop."""
        return max(self.step_s - self.step_fn_s, 0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "task": self.task,
            "strategy": self.strategy,
            "cluster": {job: list(a) for job, a in self.cluster},
            "num_replicas": self.num_replicas,
            "source": self.source,
            "flavour": self.flavour,
            "step_s": self.step_s,
            "step_iqr_s": self.step_iqr_s,
            "step_fn_s": self.step_fn_s,
            "steps": self.steps,
            "input_s": self.input_s,
            "compute_s": self.compute_s,
            "collective_s": self.collective_s,
            "traced_steps": self.traced_steps,
            "collective_ops": [list(c) for c in self.collective_ops],
            "worker_findings": [f.to_json() for f in self.findings],
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, doc: Any, where: str) -> WorkerRecord:
        d = Obj(doc, where)
        cluster = Obj(d.doc.get("cluster", {}), d.at("cluster"))
        jobs = tuple(
            (
                text(job, cluster.where),
                tuple(text(a, cluster.at(job)) for a in items(addresses, cluster.at(job))),
            )
            for job, addresses in cluster.doc.items()
        )
        ops = []
        for op in d.items("collective_ops"):
            w = f"{d.at('collective_ops')}[]"
            op_type, own = row(op, w, range(2, 3))
            ops.append((text(op_type, w), seconds(own, w)))
        return cls(
            index=d.count("index", hi=MAX_WORKERS * 16),
            task=d.text("task"),
            strategy=d.text("strategy", ""),
            cluster=jobs,
            num_replicas=d.count("num_replicas", 1, lo=1, hi=1 << 24),
            source=d.text("source", ""),
            flavour=d.text("flavour", "unknown"),
            step_s=d.seconds("step_s"),
            step_iqr_s=d.opt_seconds("step_iqr_s"),
            step_fn_s=d.seconds("step_fn_s"),
            steps=d.count("steps", 0, hi=10**9),
            input_s=d.opt_seconds("input_s"),
            compute_s=d.opt_seconds("compute_s"),
            collective_s=d.opt_seconds("collective_s"),
            traced_steps=d.count("traced_steps", 0, hi=10**9),
            collective_ops=tuple(ops),
            findings=tuple(
                WorkerFinding.from_json(f, f"{d.at('worker_findings')}[{i}]")
                for i, f in enumerate(d.items("worker_findings"))
            ),
            notes=d.texts("notes"),
        )


@dataclass(frozen=True)
class JobRecord:
    """Every worker of one job (:class:`tfdiag.results.job.JobResult` adds the formats)."""

    workers: tuple[WorkerRecord, ...]
    created: str = ""
    notes: tuple[str, ...] = ()
    schema_version: int = SCHEMA_VERSION

    kind: ClassVar[str] = "job"

    def __post_init__(self) -> None:
        check_workers(self.workers)

    def worker(self, index: int) -> WorkerRecord:
        return next(w for w in self.workers if w.index == index)


def check_workers(workers: tuple[WorkerRecord, ...]) -> None:
    """One job, each worker once.

    Raises:
        InputError: no workers, too many, two of one index or task, or two clusters.
    """
    if not workers:
        raise InputError("no worker reports to merge")
    if len(workers) > MAX_WORKERS:
        raise InputError(f"more than {MAX_WORKERS} workers")
    seen: dict[int, WorkerRecord] = {}
    for w in workers:
        if w.index in seen:
            raise InputError(
                f"{seen[w.index].source} and {w.source} are the same worker "
                f"({w.task}, index {w.index}): give one report per worker"
            )
        seen[w.index] = w
    first = workers[0]
    for w in workers[1:]:
        if w.cluster != first.cluster or w.strategy != first.strategy:
            raise InputError(
                f"{first.source} and {w.source} come from different jobs "
                f"({_job(first)} vs {_job(w)}): merge the reports of one run"
            )
        if w.num_replicas != first.num_replicas:
            raise InputError(
                f"{first.source} and {w.source} come from different jobs ({first.num_replicas} "
                f"vs {w.num_replicas} replicas in sync): merge the reports of one run"
            )
    for w in workers:
        _check_in_cluster(w)


def _task(w: WorkerRecord) -> tuple[str, int] | None:
    kind, _, index = w.task.rpartition(":")
    return (kind, int(index)) if kind and index.isdigit() else None


def _check_in_cluster(w: WorkerRecord) -> None:
    """A worker's task and index name a task of its cluster (none to check without one)."""
    if not w.cluster:
        return
    jobs = dict(w.cluster)
    size = sum(len(a) for a in jobs.values())
    task = _task(w)
    outside = task is None or task[0] not in jobs or task[1] >= len(jobs[task[0]])
    if outside or w.index >= size:
        raise InputError(
            f"{w.source}: task {w.task} (index {w.index}) is not in its cluster of {size} "
            f"task(s) ({_tasks(w)}): the report is not of this job"
        )


def _tasks(w: WorkerRecord) -> str:
    return ", ".join(f"{job} ×{len(a)}" for job, a in w.cluster)


#: The jobs of a cluster whose every task runs the training steps (and so has a report).
STEP_JOBS = ("chief", "worker")


def missing_tasks(workers: tuple[WorkerRecord, ...]) -> tuple[str, ...]:
    """The tasks of the workers' cluster that run steps and have no report here
    (``worker:1``), in cluster order; none without a cluster."""
    if not workers or not workers[0].cluster:
        return ()
    present = {w.task for w in workers}
    return tuple(
        f"{job}:{i}"
        for job, addresses in workers[0].cluster
        if job in STEP_JOBS
        for i in range(len(addresses))
        if f"{job}:{i}" not in present
    )


def _job(w: WorkerRecord) -> str:
    hosts = sum(len(a) for _, a in w.cluster)
    where = f"a cluster of {hosts} task(s), {w.cluster[0][1][0]}…" if w.cluster else "no cluster"
    return f"{w.strategy or 'unknown strategy'}, {where}"


R = TypeVar("R", bound=JobRecord)


def job_from_json(doc: dict[str, Any], cls: type[R]) -> R:
    """Rebuild a merged record from its JSON (derived views ignored, recomputed).

    Raises:
        InputError: a part missing, of the wrong type or out of range; not one job.
    """
    if doc.get("kind") != "job":
        raise InputError("not a merged job result")
    d = Obj(doc, "")
    workers = d.items("workers")
    if len(workers) > MAX_WORKERS:
        raise InputError(f"not a valid job result (more than {MAX_WORKERS} workers)")
    return cls(
        workers=tuple(WorkerRecord.from_json(w, f"workers[{i}]") for i, w in enumerate(workers)),
        created=d.text("created", ""),
        notes=d.texts("notes"),
    )
