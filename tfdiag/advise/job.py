"""Findings across the workers of a ``tf.distribute`` job: what one worker's report cannot
see — which worker the others wait for, and whether the exchange itself dominates.

:func:`worker_of` reads one worker's report into its entry of the merged record;
:func:`tfdiag.advise.job_table.job_findings` runs the cross-worker table on the merged
record, then adds each worker's own findings, once per finding id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfdiag.advise.diagnosis import diagnosis_of
from tfdiag.advise.finding import Detection
from tfdiag.analysis.job import PARTS, Wait, part_s, split_of, spread_of, waits
from tfdiag.analysis.oplevel import op_figures
from tfdiag.records.errors import InputError
from tfdiag.records.job import JobRecord, WorkerFinding, WorkerRecord
from tfdiag.records.numbers import iqr, median
from tfdiag.records.report import RunRecord
from tfdiag.records.units import fmt_pct, fmt_s


def worker_of(record: RunRecord, source: str) -> WorkerRecord:
    """One worker's entry: its task and step cycle, its TF profiler figures, its findings.

    Raises:
        InputError: the report has no strategy information, or no timed steps.
    """
    dist = record.distribution
    if dist is None:
        raise InputError(
            f"{source}: no tf.distribute strategy in this report (profile each worker's fit, "
            "run under a strategy, with tfdiag.keras.ProfileCallback)"
        )
    cycle, fn = median(dist.cycle_s), median(dist.step_fn_s)
    if cycle is None or fn is None:
        raise InputError(
            f"{source}: no steps were timed outside the profiled batches (run more batches "
            "after the callback's range)"
        )
    tf = record.probes.tf_profile if record.probes is not None else None
    ops = op_figures(tf) if tf is not None else None
    collective_ops: tuple[tuple[str, float], ...] = ()
    if tf is not None and ops is not None:
        collective_ops = tuple((t, own / tf.steps) for t, _, own in tf.collective_ops)
    return WorkerRecord(
        index=dist.rank,
        task=dist.task,
        strategy=dist.strategy,
        cluster=dist.cluster,
        num_replicas=dist.num_replicas,
        source=source,
        flavour=record.call.flavour,
        step_s=cycle,
        step_iqr_s=iqr(dist.cycle_s),
        step_fn_s=fn,
        steps=len(dist.cycle_s),
        input_s=ops.input_wait_s if ops is not None else None,
        compute_s=ops.compute_s if ops is not None else None,
        collective_s=ops.collective_s if ops is not None else None,
        traced_steps=tf.steps if tf is not None else 0,
        collective_ops=collective_ops,
        findings=tuple(
            WorkerFinding(f.id, f.title, f.severity, f.impact, f.evidence, f.fix)
            for f in diagnosis_of(record).findings
        ),
        notes=("partial: fit ended before the profiled range",) if record.partial else (),
    )


@dataclass(frozen=True)
class JobContext:
    """What a cross-worker detector reads: the merged record and its own thresholds."""

    record: JobRecord
    thresholds: Any

    def threshold(self, name: str) -> float:
        return float(self.thresholds[name])


def _names(indices: list[int]) -> str:
    return ", ".join(str(i) for i in indices)


_PART_LABEL = {
    "input": "waiting for its input pipeline",
    "callback": "outside its step function (callbacks, logs)",
    "compute": "computing its step",
}


def _slow_part(ctx: JobContext, slow: list[int], w8: dict[int, Wait]) -> tuple[str, str | None]:
    """What the slow workers are slow on: the part of their own work that exceeds the
    others' the most; a line of evidence with the numbers."""
    rec = ctx.record
    others = [w for w in rec.workers if w.index not in slow]
    best: tuple[float, str, float, float] | None = None
    for part in PARTS:
        mine = [part_s(rec.worker(i), w8[i], part) for i in slow]
        theirs = [part_s(w, w8[w.index], part) for w in others]
        if any(v is None for v in mine + theirs):
            continue
        a, b = (
            median([v for v in mine if v is not None]),
            median([v for v in theirs if v is not None]),
        )
        if a is None or b is None:
            continue
        if best is None or a - b > best[0]:
            best = (a - b, part, a, b)
    step = spread_of(rec).median_s
    if best is None or best[0] < ctx.threshold("min_lag") * step / 2:
        return "other", None
    _, part, a, b = best
    who = "worker" if len(slow) == 1 else "workers"
    return part, (
        f"{who} {_names(slow)} spend{'s' if len(slow) == 1 else ''} {fmt_s(a)} per step "
        f"{_PART_LABEL[part]}, the others {fmt_s(b)}"
    )


def straggler(ctx: JobContext) -> Detection | None:
    rec = ctx.record
    if len(rec.workers) < 2:
        return None
    step = spread_of(rec).median_s
    if step <= 0:
        return None
    w8 = waits(rec)
    least = min(w.own_s for w in w8.values())
    slow = sorted(i for i, w in w8.items() if w.own_s - least >= ctx.threshold("min_lag") * step)
    if not slow or len(slow) == len(rec.workers):
        return None
    wait = median([w8[w.index].wait_s for w in rec.workers if w.index not in slow]) or 0.0
    if wait < ctx.threshold("min_wait") * step:
        return None
    measured = all(w.measured for w in w8.values())
    fastest = min(w8, key=lambda i: w8[i].own_s)
    how = (
        "in collective ops (TF profiler)"
        if measured
        else "estimated from their step function's excess over the shortest (profile with the "
        "TF profiler to measure it)"
    )
    part, line = _slow_part(ctx, slow, w8)
    who = "worker" if len(slow) == 1 else "workers"
    evidence = [
        f"the other workers wait {fmt_s(wait)} per step for {who} {_names(slow)}, "
        f"{fmt_pct(wait / step)} of each {fmt_s(step)} step, {how}",
        f"{who} {_names(slow)}: own work {fmt_s(median([w8[i].own_s for i in slow]))} per "
        f"step, worker {fastest}: {fmt_s(least)}",
    ]
    if line is not None:
        evidence.append(line)
    spread = spread_of(rec)
    evidence.append(
        f"every worker's step is {fmt_s(spread.fastest_s)}–{fmt_s(spread.slowest_s)}: "
        "synchronous training runs at the pace of the slowest worker"
    )
    return Detection(
        impact=wait / step,
        evidence=tuple(evidence),
        variant=part,
        values={
            "Subject": f"{who.capitalize()} {_names(slow)}",
            "subject": f"{who} {_names(slow)}",
            "s": "s" if len(slow) == 1 else "",
        },
        data=(("slow_workers", slow), ("slow_on", part)),
    )


def communication_bound(ctx: JobContext) -> Detection | None:
    rec = ctx.record
    w8 = waits(rec)
    if not all(w.measured for w in w8.values()):
        return None
    shares = {w.index: w8[w.index].wait_s / w.step_s for w in rec.workers if w.step_s > 0}
    if not shares:
        return None
    last = min(shares, key=lambda i: shares[i])
    if shares[last] < ctx.threshold("min_share"):
        return None
    w = rec.worker(last)
    ops = ", ".join(f"{t} {fmt_s(s)}" for t, s in w.collective_ops[:3])
    split = split_of(w)
    evidence = [
        f"every worker spends at least {fmt_pct(shares[last])} of its step in collective ops: "
        f"worker {last}, the last to arrive, {fmt_s(w8[last].wait_s)} of {fmt_s(w.step_s)}"
        + (f" ({ops})" if ops else ""),
        f"the model's own ops take {fmt_s(split.compute_s)} per step on worker {last}",
    ]
    return Detection(impact=shares[last], evidence=tuple(evidence))
