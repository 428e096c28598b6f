"""A run record's raw JSON: what a saved report holds and what the loader reads back.

:func:`run_record_to_json` writes the raw records only; the report's JSON format
(:mod:`tfdiag.render.json`) adds the derived views beside them for other tools, and
:func:`run_record_from_json` ignores those views: a report is re-analysed on load.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from tfdiag.records.callbacks import PyCallback
from tfdiag.records.catalog import Rule
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.distributed import Distribution
from tfdiag.records.errors import InputError
from tfdiag.records.fields import Obj
from tfdiag.records.jit import JitCompile
from tfdiag.records.lines import LinesRecord
from tfdiag.records.machine import MachineLoad, NativeLog
from tfdiag.records.probes import probes_from_json, probes_to_json
from tfdiag.records.report import CallInfo, Environment, RunRecord, Timing
from tfdiag.records.stats import ProfileStats
from tfdiag.records.traces import TraceEvent
from tfdiag.records.verification import Verification

#: Column names of ``profile.functions`` rows, written beside them for other readers.
PROFILE_COLUMNS = (
    "file",
    "line",
    "name",
    "calls",
    "primitive_calls",
    "self_s",
    "cum_s",
    "callers[caller_index, calls, primitive_calls, self_s, cum_s]",
)

R = TypeVar("R", bound=RunRecord)


def run_record_to_json(record: RunRecord, *, rows_as_tuples: bool = False) -> dict[str, Any]:
    """The raw records, in the order a reader meets them; ``rows_as_tuples``: the function
    tables' rows as tuples (:meth:`ProfileStats.row_tuples`: the same JSON, for a writer)."""
    t = record.timing
    rows: Callable[[ProfileStats], list[Any]] = (
        ProfileStats.row_tuples if rows_as_tuples else ProfileStats.to_rows
    )
    return {
        "created": record.created,
        "source": record.source,
        "partial": record.partial,
        "call": {
            "label": record.call.label,
            "target": record.call.target,
            "method": record.call.method,
            "flavour": record.call.flavour,
            "args": list(record.call.args),
            "kwargs": dict(record.call.kwargs),
            "facts": dict(record.call.facts),
            "file": record.call.file,
            "line": record.call.line,
            "code": record.call.code,
        },
        "environment": record.environment.to_json(),
        "timing": {
            "iterations": t.iterations,
            "profiled_calls": t.profiled_calls,
            "first_call_s": t.first_call_s,
            "iteration_s": list(t.iteration_s),
            "profiled_iteration_s": list(t.profiled_iteration_s),
            "traced": t.traced,
        },
        "notes": list(record.notes),
        "rules": [r.to_json() for r in record.rules],
        "finding_rules": [r.to_json() for r in record.finding_rules],
        "profile": {"columns": list(PROFILE_COLUMNS), "functions": rows(record.profile)},
        "cold_profile": (
            None if record.cold_profile is None else {"functions": rows(record.cold_profile)}
        ),
        "probes": probes_to_json(record.probes),
        "traces": [e.to_json() for e in record.traces],
        "py_callbacks": [c.to_json() for c in record.py_callbacks],
        "jit_compiles": [c.to_json() for c in record.jit_compiles],
        "distribution": None if record.distribution is None else record.distribution.to_json(),
        "verifications": [v.to_json() for v in record.verifications],
        "machine": None if record.machine is None else record.machine.to_json(),
        "native_log": record.native_log.to_json(),
        "lines": None if record.lines is None else record.lines.to_json(),
    }


def run_record_from_json(doc: dict[str, Any], cls: type[R]) -> R:
    """Rebuild a record (``cls``: RunRecord or a subclass) from its JSON object; unknown keys
    are ignored, missing ones default.

    Raises:
        InputError: a part is missing, of the wrong type or out of range.
    """
    d = Obj(doc, "")
    call = Obj(d.doc.get("call", {}), "call")
    timing = Obj(d.doc.get("timing"), "timing")
    profile = d.obj("profile")
    if profile is None or type(profile.doc.get("functions")) is not list:
        raise InputError("not a valid report (profile.functions is missing)")
    iterations = timing.count("iterations", lo=1, hi=10**9)
    return cls(
        call=CallInfo(
            label=call.text("label", ""),
            target=call.text("target", ""),
            method=call.text("method", ""),
            flavour=call.text("flavour", "unknown"),
            args=call.texts("args"),
            kwargs=call.pairs("kwargs"),
            facts=call.pairs("facts"),
            file=call.text("file", ""),
            line=call.count("line", 0, hi=10**9),
            code=call.text("code", ""),
        ),
        environment=Environment.from_json(d.doc.get("environment")),
        timing=Timing(
            iterations=iterations,
            profiled_calls=timing.count("profiled_calls", iterations + 1, lo=1, hi=10**9 + 1),
            first_call_s=timing.opt_seconds("first_call_s"),
            iteration_s=timing.series("iteration_s"),
            profiled_iteration_s=timing.series("profiled_iteration_s"),
            traced=timing.count("traced", 0, hi=10**9),
        ),
        profile=ProfileStats.from_rows(profile.doc["functions"]),
        cold_profile=_cold(d.doc.get("cold_profile")),
        rules=tuple(Rule.from_json(r) for r in d.items("rules")),
        finding_rules=tuple(FindingRule.from_json(r) for r in d.items("finding_rules")),
        notes=d.texts("notes"),
        created=d.text("created", ""),
        source=d.text("source", "profile"),
        partial=d.flag("partial", False),
        probes=probes_from_json(d.doc.get("probes")),
        traces=tuple(TraceEvent.from_json(row) for row in d.items("traces")),
        py_callbacks=tuple(PyCallback.from_json(row) for row in d.items("py_callbacks")),
        jit_compiles=tuple(JitCompile.from_json(row) for row in d.items("jit_compiles")),
        distribution=Distribution.from_json(d.doc.get("distribution")),
        verifications=tuple(Verification.from_json(v) for v in d.items("verifications")),
        machine=MachineLoad.from_json(d.doc.get("machine")),
        native_log=NativeLog.from_json(d.doc.get("native_log")),
        lines=LinesRecord.from_json(d.doc.get("lines")),
    )


def _cold(value: Any) -> ProfileStats | None:
    if value is None:
        return None
    if type(value) is not dict or type(value.get("functions")) is not list:
        raise InputError("not a valid report (cold_profile.functions is missing)")
    return ProfileStats.from_rows(value["functions"])
