"""``tfdiag.diff(before, after)``: two profiled runs of one call compared — the per-iteration
ratio with both runs' noise, a verdict beyond the noise, and the findings resolved, new and
persisting."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

from tfdiag.advise.diff import DiffRecord, diff_record
from tfdiag.advise.script_diff import ScriptDiffRecord, script_diff_record
from tfdiag.analysis.diff import faster
from tfdiag.records.errors import InputError
from tfdiag.records.report import RunRecord
from tfdiag.records.script import ScriptRecord
from tfdiag.results.base import Result
from tfdiag.results.load import load_result
from tfdiag.results.report import Report

#: A re-measurement of both calls, interleaved: its rounds' ``(before_s, after_s)``
#: (:func:`tfdiag.measure.recheck.diff` gives one; this layer only calls it).
Again = Callable[[], tuple[tuple[float, float], ...]]


@dataclass(frozen=True)
class DiffResult(DiffRecord, Result):
    """BEFORE and AFTER compared. Build it with :func:`tfdiag.diff` (``tfdiag diff``)."""


def diff_records(
    before: RunRecord,
    after: RunRecord,
    names: tuple[str, str],
    again: Again | None = None,
) -> DiffResult:
    """The comparison of two runs (``names``: how the output calls them), with ``again``'s
    interleaved rounds unless the first look says AFTER is faster."""
    record = diff_record(before, after, names)
    if again is not None and not faster(record.before.spread, record.after.spread):
        record = diff_record(before, after, names, pairs=again())
    return DiffResult(**{f.name: getattr(record, f.name) for f in fields(record)})


@dataclass(frozen=True)
class ScriptDiffResult(ScriptDiffRecord, Result):
    """Two ``tfdiag run`` results compared (``tfdiag diff`` of two of them); where BEFORE
    is a saved ``tfdiag fix`` result, each patch's effect on its site in AFTER."""


Side = Report | ScriptRecord


def _report(value: RunRecord | ScriptRecord | str | os.PathLike[str]) -> tuple[Side, str | None]:
    if isinstance(value, RunRecord):
        return Report.of(value), None
    if isinstance(value, ScriptRecord):
        return value, None
    if isinstance(value, (str, os.PathLike)):
        loaded = load_result(value)
        if not isinstance(loaded, (Report, ScriptRecord)):
            raise InputError(
                f"{value}: a {loaded.kind!r} result; diff compares two profile reports or two "
                "`tfdiag run` (or `tfdiag fix --out`) results"
            )
        return loaded, Path(value).name
    raise InputError(f"diff takes reports or their paths, got {type(value).__name__}")


#: What a Keras method does per iteration: reports of different work are no before and after.
_WORK = {
    "fit": "training",
    "train_on_batch": "training",
    "evaluate": "evaluation",
    "test_on_batch": "evaluation",
    "predict": "inference",
    "predict_on_batch": "inference",
}


def _same_work(a: Report, b: Report) -> None:
    """Refuse a ``predict`` report against a ``fit`` one: the ratio of a training step to
    an inference step says nothing about a change (other callables are not judged)."""
    work = [_WORK.get(r.call.method) for r in (a, b)]
    if None not in work and work[0] != work[1]:
        raise InputError(
            f"BEFORE times {a.call.label} ({work[0]}), AFTER {b.call.label} ({work[1]}): "
            "not two runs of one call; diff reports of the same kind of call"
        )


def diff(
    before: RunRecord | ScriptRecord | str | os.PathLike[str],
    after: RunRecord | ScriptRecord | str | os.PathLike[str],
    *,
    again: Again | None = None,
) -> DiffResult | ScriptDiffResult:
    """Two runs compared (:func:`tfdiag.diff`, which is :func:`tfdiag.measure.recheck.diff`:
    this with ``again`` built from its ``rerun``).

    Raises:
        InputError: an unreadable report, one without timed iterations, or reports of
            different work (``predict`` against ``fit``), or a report against a ``tfdiag
            run`` result. Two ``tfdiag run`` results give a :class:`ScriptDiffResult`.
    """
    a, a_name = _report(before)
    b, b_name = _report(after)
    if a_name is None or b_name is None or a_name == b_name:
        a_name, b_name = "before", "after"
    if isinstance(a, ScriptRecord) and isinstance(b, ScriptRecord):
        record = script_diff_record(a, b, (a_name, b_name))
        return ScriptDiffResult(**{f.name: getattr(record, f.name) for f in fields(record)})
    if isinstance(a, ScriptRecord) or isinstance(b, ScriptRecord):
        raise InputError(
            "BEFORE and AFTER are a profile report and a `tfdiag run` result: diff compares "
            "two of one kind"
        )
    _same_work(a, b)
    return diff_records(a, b, (a_name, b_name), again)
