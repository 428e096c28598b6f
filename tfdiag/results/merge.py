"""``tfdiag.merge``: read each worker's report and merge them into one job view."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from tfdiag.records.errors import InputError
from tfdiag.records.report import RunRecord
from tfdiag.results.job import JobResult, merge_records
from tfdiag.results.load import load_report


def merge(
    reports: Iterable[RunRecord | str | os.PathLike[str]], *, partial: bool = False
) -> JobResult:
    """One view across the workers of a ``tf.distribute`` job: each worker's step split into
    callbacks, input, compute and collectives, the spread of step times, and cross-worker
    findings (``straggler``, ``communication-bound``) beside each worker's own.

    Args:
        reports: each worker's report (``ProfileCallback(save=...)``) or its path.
        partial: merge although some of the job's tasks have no report among ``reports``
            (a note in the result names them); without it that is refused.

    Raises:
        InputError: an unreadable report, one without strategy information, two reports of
            the same worker, reports of different jobs (cluster, strategy, replicas in
            sync), a task outside its cluster, or a task without a report (and not
            ``partial``).
    """
    pairs = []
    for n, r in enumerate(reports):
        if isinstance(r, RunRecord):
            pairs.append((r, f"report {n + 1}"))
        elif isinstance(r, (str, os.PathLike)):
            pairs.append((load_report(r), Path(r).name))
        else:
            raise InputError(f"merge takes reports or their paths, got {type(r).__name__}")
    return merge_records(pairs, partial=partial)
