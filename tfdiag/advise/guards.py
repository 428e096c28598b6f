"""What the CI guards read off the findings table and the recorded traces: which findings
fail a test by default, and each retraced function with its cause.

Pure logic on data (the findings table, :class:`~tfdiag.records.traces.TraceEvent` s): the
pytest plugin's ``tfdiag_check`` and ``tfdiag.max_traces`` use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tfdiag.advise.finding import Finding
from tfdiag.advise.table import FINDINGS
from tfdiag.advise.tracing import retrace_cause
from tfdiag.records.errors import InputError
from tfdiag.records.traces import TraceEvent

SEVERITIES = ("low", "medium", "high")


def python_side_ids() -> tuple[str, ...]:
    """The findings a change to the user's Python fixes: every ``steady`` tier finding
    (a share of every iteration that a different call, argument or setting removes).

    Left out: the ``conclusion`` (``compute-bound``: the model's own ops), the ``one-time``
    costs (``build-dominated``, ``warmup``) and the ``timing`` patterns (``spikes``,
    ``drift``: the machine, the garbage collector, a trend).
    """
    return tuple(spec.id for spec in FINDINGS if spec.tier == "steady")


def known_ids() -> tuple[str, ...]:
    return tuple(spec.id for spec in FINDINGS)


def check_forbid(forbid: Iterable[str], extra: Iterable[str] = ()) -> tuple[str, ...]:
    """``forbid`` as a tuple of finding ids, each a built-in one or one of ``extra`` (the
    user's own finding rules).

    Raises:
        InputError: a string rather than a list, or an id no finding has (a typo would
            otherwise forbid nothing).
    """
    if isinstance(forbid, str):
        raise InputError(f"forbid takes a list of finding ids, got the string {forbid!r}")
    ids = tuple(forbid)
    known = (*known_ids(), *extra)
    for finding in ids:
        if not isinstance(finding, str) or finding not in known:
            raise InputError(
                f"forbid: {finding!r} is not a finding id (known: {', '.join(known_ids())})"
            )
    return ids


def check_severity(severity: object) -> str:
    if severity not in SEVERITIES:
        raise InputError(f"severity must be one of {', '.join(SEVERITIES)}, got {severity!r}")
    assert isinstance(severity, str)
    return severity


def forbidden(
    findings: Iterable[Finding], forbid: Sequence[str], severity: str = "medium"
) -> tuple[Finding, ...]:
    """The findings whose id is in ``forbid`` at ``severity`` or above, in report order."""
    floor = SEVERITIES.index(severity)
    return tuple(
        f
        for f in findings
        if f.id in forbid and f.severity in SEVERITIES and SEVERITIES.index(f.severity) >= floor
    )


# -- traces ----------------------------------------------------------------------------

#: The helper graph TensorFlow traces to initialise a function's variables on its first call.
_INIT_VARIABLES = "_initialize_uninitialized_variables"


@dataclass(frozen=True)
class Retraced:
    """One ``tf.function`` traced more often than allowed, and why.

    Attributes:
        function: the traced Python function's qualified name.
        where: ``file:line`` of its definition.
        traces: how many graphs were traced for it.
        cause: what differs between the traces, in words.
        variant: the kind of cause (``python-value``, ``shape``, ``new-function``, ...),
            the key of the matching ``per-iteration-tracing`` fix text.
    """

    function: str
    where: str
    traces: int
    cause: str
    variant: str


_Key = tuple[str, str, int, str]


def _is_data(e: TraceEvent) -> bool:
    return e.name.startswith("Dataset_") or "StructuredFunctionWrapper" in e.function


def _key(e: TraceEvent) -> _Key:
    """A function by its source; tf.data's functions (all one wrapper in TensorFlow's source)
    by their name too (``Dataset_map_grab_batch``)."""
    return (e.function, e.file, e.line, e.name if _is_data(e) else "")


def counted_traces(events: Sequence[TraceEvent]) -> dict[_Key, list[TraceEvent]]:
    """The traces of each function (:func:`_key`), in order, without those TensorFlow
    makes once for a function that creates variables on its first call: its variable
    initialiser, and the second trace of the same call with the same argument types."""
    out: dict[_Key, list[TraceEvent]] = {}
    skip: set[int] = set()
    for k, e in enumerate(events):
        if _INIT_VARIABLES not in e.function:
            continue
        skip.add(k)
        if 0 < k < len(events) - 1:
            before, after = events[k - 1], events[k + 1]
            if _key(before) == _key(after) and before.params == after.params:
                skip.add(k + 1)
    for k, e in enumerate(events):
        if k not in skip:
            out.setdefault(_key(e), []).append(e)
    return out


def explain_retrace(traces: Sequence[TraceEvent]) -> tuple[str, str]:
    """``(variant, cause)`` of a function's repeated traces: the argument whose Python value,
    shape or type changes (:func:`~tfdiag.advise.tracing.retrace_cause`), else a tf.data
    function of a pipeline built again, else a new ``tf.function`` object per call when the
    objects differ."""
    found = retrace_cause(list(traces))
    if found is not None:
        return found
    if _is_data(traces[0]):
        return (
            "via-data",
            "a function of a tf.data pipeline that is built again each time",
        )
    objects = len({t.function_id for t in traces})
    if objects > 1:
        return (
            "new-function",
            f"traced with the same argument types by {objects} different `tf.function` "
            "objects: a new `tf.function` is made for every call",
        )
    return (
        "other",
        "traced again with the same argument types by the same `tf.function` object",
    )


def retraced(events: Sequence[TraceEvent], limit: int) -> tuple[Retraced, ...]:
    """Every function traced more than ``limit`` times, most traces first."""
    out = []
    for (function, file, line, data_name), traces in counted_traces(events).items():
        if len(traces) <= limit:
            continue
        variant, cause = explain_retrace(traces)
        where = f"{file.replace(chr(92), '/').rsplit('/', 1)[-1] or '?'}:{line}"
        if data_name:
            function, where = data_name, "tf.data"
        out.append(Retraced(function, where, len(traces), cause, variant))
    return tuple(sorted(out, key=lambda r: -r.traces))


def retrace_fix(variant: str) -> str:
    """The ``per-iteration-tracing`` fix text for a cause (its ``-alone`` text when there is
    one: here no other finding is reported beside it)."""
    fixes = next(spec.fixes for spec in FINDINGS if spec.id == "per-iteration-tracing")
    return fixes.get(f"{variant}-alone", fixes.get(variant, fixes["other"]))
