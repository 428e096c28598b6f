"""``tfdiag.merge``'s result: one view across the workers of a ``tf.distribute`` job."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tfdiag.advise.finding import Finding
from tfdiag.advise.job import worker_of
from tfdiag.advise.job_table import job_findings
from tfdiag.records.clock import now_iso
from tfdiag.records.errors import InputError
from tfdiag.records.files import Content
from tfdiag.records.job import MAX_WORKERS, JobRecord, missing_tasks
from tfdiag.records.report import RunRecord, report_paths
from tfdiag.results.base import Result


@dataclass(frozen=True)
class JobResult(JobRecord, Result):
    """Every worker of one job. Build it with :func:`tfdiag.merge` (``tfdiag merge``)."""

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Cross-worker findings (``straggler``, ``communication-bound``) by impact, then
        each worker's own findings, once per id."""
        return job_findings(self)

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write ``<stem>.tfdiag.json`` (or ``path`` itself when it ends in .json), atomically;
        an existing file is not replaced unless ``overwrite``."""
        return self._write(path, overwrite=overwrite)[0]

    def _default_files(self, path: Path) -> dict[Path, Content]:
        from tfdiag.render.formats import document

        text = json.dumps(document(self), separators=(",", ":"), allow_nan=False)
        return {report_paths(path)[0]: text.encode("utf-8")}


def merge_records(
    records: Iterable[tuple[RunRecord, str]],
    *,
    notes: tuple[str, ...] = (),
    partial: bool = False,
) -> JobResult:
    """The merged view of ``(worker report, its name)`` pairs, workers in index order.

    ``partial``: merge although some tasks of the cluster have no report here (a note names
    them); without it that is refused.

    Raises:
        InputError: a report without strategy information or timed steps, two reports of
            one worker, reports of different jobs (cluster, strategy, replicas in sync), a
            task outside its cluster, a task with no report (without ``partial``).
    """
    workers = []
    for record, source in records:
        workers.append(worker_of(record, source))
        if len(workers) > MAX_WORKERS:
            raise InputError(f"more than {MAX_WORKERS} worker reports")
    if not workers:
        raise InputError("no worker reports to merge")
    # checks duplicates and jobs in the order given, then sorts
    JobRecord(tuple(workers))
    missing = missing_tasks(tuple(workers))
    if missing:
        size = sum(len(a) for _, a in workers[0].cluster)
        named = ", ".join(missing[:8]) + (
            f" and {len(missing) - 8:,} more" if len(missing) > 8 else ""
        )
        if not partial:
            raise InputError(
                f"no report from {named} of the {size}-task cluster: the others wait for "
                "it, so without it no wait or straggler is right; give every worker's "
                "report, or merge these with --partial (partial=True)"
            )
        notes = (
            *notes,
            f"partial merge: no report from {named} ({len(missing):,} of {size} tasks): the "
            "waits and the straggler are among the workers given only",
        )
    return JobResult(tuple(sorted(workers, key=lambda w: w.index)), now_iso(), notes)
