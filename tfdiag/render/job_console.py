"""The rich console view of a merged job: the job, one row per worker with its step split,
the spread, and the findings (cross-worker first)."""

from __future__ import annotations

import re

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from tfdiag.advise.job_table import job_findings
from tfdiag.analysis.job import split_of, spread_of, waits
from tfdiag.records.job import JobRecord
from tfdiag.records.units import fmt_pct, fmt_s
from tfdiag.render.caps import MAX_WORKERS_SHOWN, listed, more, shown_notes
from tfdiag.render.findings import finding_block
from tfdiag.render.names import NamedRows
from tfdiag.render.safe import labelled


def _source_parts(source: str) -> list[str]:
    """A report's path or a worker's address breaks only after a ``/``."""
    return re.findall(r"[^/]*/|[^/]+", source) or [source]


def _part(seconds: float | None, step: float) -> str:
    if seconds is None:
        return "–"
    return f"{fmt_s(seconds)}\n{fmt_pct(seconds / step) if step > 0 else ''}".strip()


def render_job(record: JobRecord) -> RenderableType:
    first = record.workers[0]
    spread = spread_of(record)
    hosts = listed([a for _, addresses in first.cluster for a in addresses], "host")
    lines = [
        labelled(
            "job",
            f"{first.strategy or 'unknown strategy'} · {len(record.workers)} worker report(s) · "
            f"{first.num_replicas} replicas in sync",
        ),
    ]
    if hosts:
        lines.append(labelled("cluster", hosts))
    lines.append(
        labelled(
            "step",
            f"median {fmt_s(spread.median_s)} per step across workers (fastest "
            f"{fmt_s(spread.fastest_s)}, slowest {fmt_s(spread.slowest_s)}: spread "
            f"{fmt_pct(spread.spread)})",
        )
    )
    for note in shown_notes(record.notes):
        lines.append(labelled("note", note))
    parts: list[RenderableType] = [Panel(Group(*lines), title="tfdiag merge", box=box.ROUNDED)]
    w8 = waits(record)
    rows = []
    for w in record.workers[:MAX_WORKERS_SHOWN]:
        s = split_of(w)
        wait = w8[w.index]
        rows.append(
            (
                w.source,
                (
                    str(w.index),
                    w.task,
                    fmt_s(s.step_s),
                    _part(s.callbacks_s, s.step_s),
                    _part(s.input_s, s.step_s),
                    _part(s.compute_s, s.step_s),
                    _part(s.collective_s, s.step_s),
                    _part(s.other_s, s.step_s),
                    fmt_s(wait.wait_s) + ("" if wait.measured else "~"),
                ),
            )
        )
    parts.append(
        NamedRows(
            title="Each worker's step (median, start to start), split",
            name_header="report",
            headers=(
                "#",
                "task",
                "step",
                "callbacks",
                "input",
                "compute",
                "comms",
                "other",
                "wait",
            ),
            rows=tuple(rows),
            right=frozenset({0, 2, 3, 4, 5, 6, 7, 8}),
            caption="comms: collective ops (all-reduce, all-gather); wait~: estimated",
            split=_source_parts,
        )
    )
    if len(record.workers) > MAX_WORKERS_SHOWN:
        parts.append(Text(f"  {more(len(record.workers) - MAX_WORKERS_SHOWN, 'worker')}"))
    if not all(w.measured for w in w8.values()):
        parts.append(
            Text(
                "  without the TF profiler on every worker, input, compute and collectives "
                'are not told apart ("other" is the whole step function) and the wait is '
                "estimated from the step functions' times",
                style="dim",
            )
        )
    found = job_findings(record)
    body: list[RenderableType] = []
    for n, f in enumerate(found, 1):
        workers = dict(f.data).get("workers")
        scope = ""
        if workers is not None:
            shown = listed(list(map(str, workers)), "worker")
            scope = f"[worker{'s' if len(workers) > 1 else ''} {shown}] "
        body += finding_block(f, head=f"{n}. {scope}")
    parts.append(
        Panel(
            Group(*body) if body else Text("no findings"),
            title="Findings (cross-worker first)",
            box=box.ROUNDED,
        )
    )
    return Group(*parts)
