"""``tfdiag.diff(before, after)``: two profiled runs of one call compared — the per-iteration
ratio with both runs' noise, a verdict beyond the noise, and the findings resolved, new and
persisting."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

from tfdiag.advise.diff import DiffRecord, diff_record
from tfdiag.analysis.diff import faster
from tfdiag.records.errors import InputError
from tfdiag.records.report import RunRecord
from tfdiag.results.base import Result
from tfdiag.results.load import load_report
from tfdiag.results.report import Report


@dataclass(frozen=True)
class DiffResult(DiffRecord, Result):
    """BEFORE and AFTER compared. Build it with :func:`tfdiag.diff` (``tfdiag diff``)."""


def diff_records(
    before: RunRecord,
    after: RunRecord,
    names: tuple[str, str],
    rerun: tuple[Callable[[], object], Callable[[], object]] | None = None,
) -> DiffResult:
    """The comparison of two runs (``names``: how the output calls them), re-measured
    interleaved with ``rerun``'s two calls unless the first look says AFTER is faster."""
    record = diff_record(before, after, names)
    if rerun is not None and not faster(record.before.spread, record.after.spread):
        from tfdiag.measure.recheck import recheck

        record = diff_record(before, after, names, pairs=recheck(*rerun))
    return DiffResult(**{f.name: getattr(record, f.name) for f in fields(record)})


def _report(value: RunRecord | str | os.PathLike[str]) -> tuple[Report, str | None]:
    if isinstance(value, RunRecord):
        return Report.of(value), None
    if isinstance(value, (str, os.PathLike)):
        return load_report(value), Path(value).name
    raise InputError(f"diff takes reports or their paths, got {type(value).__name__}")


def diff(
    before: RunRecord | str | os.PathLike[str],
    after: RunRecord | str | os.PathLike[str],
    *,
    rerun: tuple[Callable[[], object], Callable[[], object]] | None = None,
) -> DiffResult:
    """Compare two runs of a call, before and after a change: the per-iteration ratio
    AFTER/BEFORE with both runs' noise (interquartile range), a verdict (``faster``,
    ``slower``, ``same`` beyond the noise: docs/ci.md), and the findings ``resolved``,
    ``new`` and ``persisting`` by id with their impacts. Runs from different machines or
    versions are compared with a warning.

    Args:
        before, after: reports (``tfdiag.profile``'s) or the paths of saved ones.
        rerun: BEFORE's and AFTER's calls, with no arguments (``lambda: old(x)``, ``lambda:
            new(x)``): unless the saved runs' first look says AFTER is faster, both are
            re-measured interleaved (30 rounds) and the ratio, verdict and
            ``slower_than`` are that re-measurement's — a load burst that slowed one saved
            run cannot fail the gate.

    Raises:
        InputError: an unreadable report, or one without timed iterations.
    """
    a, a_name = _report(before)
    b, b_name = _report(after)
    if a_name is None or b_name is None or a_name == b_name:
        a_name, b_name = "before", "after"
    return diff_records(a, b, (a_name, b_name), rerun)
