"""The cross-worker findings table of ``tfdiag merge`` and :func:`job_findings`, which runs
it: rows like :data:`tfdiag.advise.table.FINDINGS`, whose detectors read a whole job
(:class:`tfdiag.advise.job.JobContext`).

docs/catalog.md lists them after the per-run findings (``python -m tfdiag catalog``).
"""

from __future__ import annotations

from tfdiag.advise import job
from tfdiag.advise.finding import CallKind, Finding, FindingSpec
from tfdiag.advise.job import JobContext
from tfdiag.records.job import JobRecord, WorkerFinding, WorkerRecord

JOB_FINDINGS: tuple[FindingSpec[JobContext], ...] = (
    FindingSpec(
        "straggler",
        "A straggler: the other workers wait for one",
        job.straggler,
        fixes={
            "callback": "{Subject} run{s} per-batch work in a callback on the training "
            "thread, and every other worker waits for it at the next all-reduce: make it "
            "cheaper, run it every N batches (`if batch % 100 == 0:`) or on the chief only "
            "(`if task_index == 0:`), and move I/O (checkpoints, logs, uploads) to "
            "`on_epoch_end` or off the training thread.",
            "input": "The input pipeline of {subject} cannot keep up, and every other "
            "worker waits for it: parallelise it (`map(..., num_parallel_calls=tf.data."
            "AUTOTUNE)`, `.prefetch(tf.data.AUTOTUNE)` last), check that host's data source (a "
            "slower disk or network share), shard by file so each worker reads only its own "
            "(`AutoShardPolicy.FILE`), or share preprocessing with the tf.data service.",
            "compute": "{Subject} compute{s} the step slower than the others, who wait "
            "for it: check that host (a slower or busier GPU/CPU, thermal throttling, another "
            "job on it), the device placement, and that every worker gets the same per-replica "
            "batch and the same model.",
            "other": "The other workers wait for {subject} at every all-reduce: compare "
            "its own report (`tfdiag explain`) with theirs, and look at that host for what "
            "else runs there.",
        },
        thresholds={"min_lag": 0.2, "min_wait": 0.15},
        when="in a merge of ≥ 2 workers, some (not all) do own work (step minus the wait in "
        "collectives) ≥ `min_lag` of the step longer than the least busy worker, and the "
        "others wait ≥ `min_wait` of the step for them; the wait is the TF profiler's time in "
        "collective ops, else estimated from the step functions' times; what they are slow "
        "on is the part of their step (input wait, callbacks, compute) that exceeds the "
        "others' the most",
    ),
    FindingSpec(
        "communication-bound",
        "Communication-bound: collectives dominate the step",
        job.communication_bound,
        fixes={
            "other": "Exchange less often, in larger pieces: a larger per-replica batch (fewer "
            "all-reduces per sample; scale the learning rate with it), gradient packing "
            "(`tf.distribute.experimental.CommunicationOptions(bytes_per_pack=32 * 2**20)` "
            "passed as `MultiWorkerMirroredStrategy(communication_options=...)`, with "
            "`implementation=NCCL` on GPUs), fewer but larger steps "
            "(`compile(steps_per_execution=...)` amortises the per-step overhead), or a faster "
            "interconnect between the hosts.",
        },
        thresholds={"min_share": 0.3},
        when="with the TF profiler on every worker: even the worker that waits least (the "
        "last to arrive at the all-reduce) spends ≥ `min_share` of its step in collective "
        "ops, so the exchange itself, not a straggler, takes the time",
    ),
)


def job_findings(record: JobRecord) -> tuple[Finding, ...]:
    """The cross-worker findings by impact, then each worker's own findings once per id
    (the evidence of the worker where it weighs most, the workers it was found on)."""
    found = []
    for spec in JOB_FINDINGS:
        d = spec.detect(JobContext(record, spec.thresholds))
        if d is None:
            continue
        impact = round(min(max(d.impact, 0.0), 1.0), 4)
        fix = spec.fix_for(d, CallKind.FIT)
        found.append(
            Finding(spec.id, spec.title, spec.severity(impact), impact, d.evidence, fix, d.data)
        )
    found.sort(key=lambda f: -f.impact)
    by_id: dict[str, list[tuple[WorkerRecord, WorkerFinding]]] = {}
    for w in record.workers:
        for f in w.findings:
            by_id.setdefault(f.id, []).append((w, f))
    per_worker = []
    for pairs in by_id.values():
        w, top = max(pairs, key=lambda p: p[1].impact)
        on = sorted(p[0].index for p in pairs)
        evidence = tuple(f"worker {w.index}: {line}" for line in top.evidence)
        per_worker.append(
            Finding(
                top.id, top.title, top.severity, top.impact, evidence, top.fix, (("workers", on),)
            )
        )
    per_worker.sort(key=lambda f: -f.impact)
    return (*found, *per_worker)
