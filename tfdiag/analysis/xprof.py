"""Read xprof's tool output (plain JSON) into a :class:`~tfdiag.records.probes.TfProfile`.

Pure functions, no TensorFlow: the TF profiler probe converts its trace with
``xprof.convert.raw_to_tool_data.xspace_to_tool_data`` and hands the JSON of the
``framework_op_stats`` and ``overview_page`` tools here. Both are lists of
Google-Charts data tables (``cols``, ``rows``, ``p``); tables are found by the
properties they carry, not by position, so a reordered xprof still reads.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tfdiag.records.probes import InputStage, OpRow, PyFuncs, TfProfile, XlaCompile

#: Ops kept in the report, by self time.
TOP_OPS = 15
_US = 1e-6
_H2D = re.compile(r"memcpy.?h.?(?:to|2).?d", re.IGNORECASE)
_D2H = re.compile(r"memcpy.?d.?(?:to|2).?h", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
#: xprof's step-time breakdown (overview page), property prefix → its label in the UI.
BREAKDOWN = (
    ("host_compute", "host compute"),
    ("device_compute", "device compute"),
    ("device_to_device", "device to device"),
    ("device_collectives", "device collectives"),
    ("kernel_launch", "kernel launch"),
    ("infeed", "input (host wait + host→device)"),
    ("outfeed", "output (device→host)"),
    ("compile", "compilation"),
    ("other", "all others (Python, I/O)"),
)
_NO_DEVICE = frozenset({"", "CPU_ONLY", "CPU"})


class XprofFormatError(ValueError):
    """xprof's output does not have the expected shape (a newer or older xprof)."""


def _tables(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise XprofFormatError("expected a list of data tables")
    return [t for t in doc if isinstance(t, dict)]


def table_rows(table: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A gviz data table's rows as ``{column id: value}``."""
    ids = [str(c.get("id", "")) for c in table.get("cols", ())]
    out = []
    for row in table.get("rows", ()) or ():
        cells = row.get("c", ()) if isinstance(row, dict) else ()
        out.append({i: (c.get("v") if isinstance(c, dict) else None) for i, c in zip(ids, cells)})
    return out


def _props(doc: Any, key: str) -> dict[str, str]:
    """The properties of the first table that has ``key``."""
    for t in _tables(doc):
        p = t.get("p")
        if isinstance(p, dict) and key in p:
            return {str(k): str(v) for k, v in p.items()}
    return {}


def _table_with(doc: Any, key: str) -> dict[str, Any] | None:
    for t in _tables(doc):
        p = t.get("p")
        if isinstance(p, dict) and key in p:
            return t
    return None


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def plain_text(markup: str) -> str:
    """xprof's HTML statements as one line of text."""
    return " ".join(html.unescape(_TAG.sub("", markup)).split())


_PY_FUNCS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
_COLLECTIVE = re.compile(r"^(?:Collective|Nccl|AllReduce|CrossReplica|AllGather|AllToAll)")


def is_py_func(op_type: str) -> bool:
    """An op that calls back into Python: ``tf.py_function`` / ``tf.numpy_function``."""
    return op_type in _PY_FUNCS


def is_collective_op(op_type: str) -> bool:
    """Cross-replica communication: all-reduce, broadcast, gather (CPU and GPU names)."""
    return bool(_COLLECTIVE.match(op_type))


def is_input_op(op_type: str, name: str) -> bool:
    """tf.data work: iterator events (``Iterator::…``) and dataset-creating ops."""
    return (
        op_type == "Dataset"
        or op_type.endswith("Dataset")
        or "Iterator" in op_type
        or name.startswith("Iterator::")
    )


@dataclass(frozen=True)
class OpStats:
    """Totals from framework_op_stats (IDLE excluded), in seconds over all traced steps."""

    host_op_s: float
    input_op_s: float
    device_op_s: float
    h2d_s: float
    d2h_s: float
    top_ops: tuple[OpRow, ...]
    op_rows: int
    eager_op_s: float = 0.0
    collective_op_s: float = 0.0
    #: ``(op type, occurrences, self seconds)`` of each collective op type, by self time.
    collective_ops: tuple[tuple[str, int, float], ...] = ()


def collectives_by_type(ops: Sequence[OpRow]) -> tuple[tuple[str, int, float], ...]:
    """The collective ops summed by type (``CollectiveReduceV2``...), by self time."""
    by_type: dict[str, list[float]] = {}
    for o in ops:
        if is_collective_op(o.type):
            row = by_type.setdefault(o.type, [0, 0.0])
            row[0] += o.occurrences
            row[1] += o.self_s
    rows = [(t, int(n), s) for t, (n, s) in by_type.items()]
    return tuple(sorted(rows, key=lambda r: r[2], reverse=True))


def parse_op_stats(doc: Any) -> OpStats:
    """Read xprof's ``framework_op_stats`` JSON."""
    tables = [t for t in _tables(doc) if t.get("cols")]
    if not tables:
        raise XprofFormatError("framework_op_stats has no table")
    ops = []
    eager_s = 0.0
    for r in table_rows(tables[0]):
        op_type, name = str(r.get("type") or ""), str(r.get("operation") or "")
        if op_type == "IDLE":
            continue
        if str(r.get("eager", "")).lower() in ("true", "yes", "1"):
            eager_s += _num(r.get("total_self_time")) * _US
        ops.append(
            OpRow(
                host_or_device=str(r.get("host_or_device") or "Host"),
                type=op_type,
                name=name,
                occurrences=int(_num(r.get("occurrences"))),
                self_s=_num(r.get("total_self_time")) * _US,
                total_s=_num(r.get("total_time")) * _US,
            )
        )
    host = [o for o in ops if o.host_or_device != "Device"]
    device = [o for o in ops if o.host_or_device == "Device"]
    ops.sort(key=lambda o: o.self_s, reverse=True)
    return OpStats(
        host_op_s=sum(o.self_s for o in host),
        input_op_s=sum(o.self_s for o in host if is_input_op(o.type, o.name)),
        device_op_s=sum(o.self_s for o in device),
        h2d_s=sum(o.self_s for o in ops if _H2D.search(o.type) or _H2D.search(o.name)),
        d2h_s=sum(o.self_s for o in ops if _D2H.search(o.type) or _D2H.search(o.name)),
        top_ops=tuple(ops[:TOP_OPS]),
        op_rows=len(ops),
        eager_op_s=eager_s,
        collective_op_s=sum(o.self_s for o in ops if is_collective_op(o.type)),
        collective_ops=collectives_by_type(ops),
    )


def parse_input_stages(doc: Any) -> tuple[InputStage, ...]:
    """The tf.data iterators of xprof's ``input_pipeline_analyzer``, by self time (the table
    whose columns include ``opName`` and ``selfTimeInMs``); none when there is no tf.data."""
    if doc is None:
        return ()
    stages = []
    for table in _tables(doc):
        ids = {str(c.get("id", "")) for c in table.get("cols", ())}
        if not {"opName", "selfTimeInMs"} <= ids:
            continue
        for r in table_rows(table):
            name = str(r.get("opName") or "")
            if not name:
                continue
            stages.append(
                InputStage(
                    name=name,
                    count=int(_num(r.get("count"))),
                    total_s=_num(r.get("timeInMs")) * 1e-3,
                    self_s=_num(r.get("selfTimeInMs")) * 1e-3,
                    category=str(r.get("category") or ""),
                )
            )
    stages.sort(key=lambda s: s.self_s, reverse=True)
    return tuple(stages[:TOP_OPS])


@dataclass(frozen=True)
class Overview:
    """What tfdiag keeps from xprof's ``overview_page``."""

    hardware: str
    device_type: str
    step_ms: tuple[float, ...]
    breakdown_ms: tuple[tuple[str, float], ...]
    verdict: str
    advice: tuple[str, ...]

    @property
    def has_device(self) -> bool:
        return self.hardware not in _NO_DEVICE and self.device_type not in _NO_DEVICE


def parse_overview(doc: Any) -> Overview:
    """Read xprof's ``overview_page`` JSON: step times, breakdown, verdict, environment."""
    steps = _table_with(doc, "steptime_ms_average")
    if steps is None:
        raise XprofFormatError("overview_page has no step-time table")
    sp = {str(k): str(v) for k, v in steps.get("p", {}).items()}
    step_ms = tuple(_num(r.get("stepTimeMs")) for r in table_rows(steps))
    breakdown = tuple((label, _num(sp.get(f"{key}_time_ms_avg"))) for key, label in BREAKDOWN)
    rec = _props(doc, "statement")
    verdict = plain_text(rec.get("statement", "") or sp.get("input_conclusion", ""))
    advice = [
        plain_text(v)
        for k, v in sorted(rec.items())
        if k.endswith("_statement") and k != "statement" and v.strip()
    ]
    if sp.get("summary_nextstep", "").strip():
        advice.append(plain_text(sp["summary_nextstep"]))
    env = _props(doc, "device_type")
    return Overview(
        hardware=sp.get("hardware_type", ""),
        device_type=env.get("device_type", ""),
        step_ms=step_ms,
        breakdown_ms=breakdown,
        verdict=verdict,
        advice=tuple(advice),
    )


def events_per_step(steps: Sequence[tuple[int, int]], events: Sequence[int]) -> tuple[int, ...]:
    """How many ``events`` (start times) fall in each ``(start, end)`` step interval."""
    return tuple(sum(1 for t in events if start <= t <= end) for start, end in steps)


def tf_profile_from_tools(
    op_stats_doc: Any,
    overview_doc: Any,
    *,
    iteration_s: Sequence[float],
    graph_builds_per_step: Sequence[int] | None,
    host_tracer_level: int,
    export_s: float = 0.0,
    input_doc: Any = None,
    py_funcs: PyFuncs | None = None,
    xla_compiles: Sequence[XlaCompile] = (),
) -> TfProfile:
    """Combine the two xprof tools with the probe's own clock into one record."""
    ops = parse_op_stats(op_stats_doc)
    ov = parse_overview(overview_doc)
    device = ov.has_device or ops.device_op_s > 0
    return TfProfile(
        steps=len(iteration_s),
        iteration_s=tuple(iteration_s),
        hardware=ov.hardware or ov.device_type,
        host_op_s=ops.host_op_s,
        input_op_s=ops.input_op_s,
        device_op_s=ops.device_op_s if device else None,
        h2d_s=ops.h2d_s if device else None,
        d2h_s=ops.d2h_s if device else None,
        top_ops=ops.top_ops,
        op_rows=ops.op_rows,
        step_ms=ov.step_ms,
        breakdown_ms=ov.breakdown_ms,
        verdict=ov.verdict,
        advice=ov.advice,
        graph_builds=None if graph_builds_per_step is None else sum(graph_builds_per_step),
        graph_builds_per_step=tuple(graph_builds_per_step or ()),
        host_tracer_level=host_tracer_level,
        export_s=export_s,
        input_stages=parse_input_stages(input_doc),
        py_funcs=py_funcs,
        eager_op_s=ops.eager_op_s,
        collective_op_s=ops.collective_op_s,
        collective_ops=ops.collective_ops,
        xla_compiles=tuple(xla_compiles),
    )


# -- derived views -----------------------------------------------------------------


_PS = 1e-12


def step_cycles(
    steps: Sequence[tuple[int, int]], inner: Sequence[tuple[int, int]]
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Each step's cycle and step-function time, in seconds, from a trace's events.

    ``steps`` are the step markers ``(start, duration)`` in picoseconds (tf_keras' ``train``
    around one batch, callbacks included), ``inner`` the step-function events (its
    ``train_function``). Returns ``(cycle_s, step_fn_s)`` for every step but the last (a
    cycle runs from one step's start to the next's): the step function is the inner events
    that start inside the step, or the whole step when it has none.
    """
    ordered = sorted(steps)
    fns = sorted(inner)
    cycles, in_fn = [], []
    for (start, duration), (nxt, _) in zip(ordered, ordered[1:]):
        own = [d for s, d in fns if start <= s <= start + duration]
        cycles.append((nxt - start) * _PS)
        in_fn.append((sum(own) if own else duration) * _PS)
    return tuple(cycles), tuple(in_fn)


#: The XSpace event of one XLA compilation (one executable, one concrete input shape):
#: ``CpuCompiler::RunBackend`` on CPU, ``GpuCompiler::RunBackend`` on a GPU; its ``name``
#: stat is the HLO module's name.
XLA_COMPILE_SUFFIX = "Compiler::RunBackend"
_HLO_NAME = re.compile(r"^(?:a_)?_*inference_(?P<fn>.+?)_\d+__(?:\.\d+)*$")


def xla_function_name(module: str) -> str:
    """The tf.function behind an HLO module: ``a_inference_one_step_on_data_110__.1`` →
    ``one_step_on_data``; other names are kept as they are."""
    m = _HLO_NAME.match(module)
    return m.group("fn") if m else module


def xla_compiles(
    events: Sequence[tuple[str, int, int]], steps: Sequence[tuple[int, int]]
) -> tuple[XlaCompile, ...]:
    """``(HLO module, start, duration)`` compile events (picoseconds) grouped by function,
    with the traced steps (``(start, end)``) each compiled in; heaviest first."""
    found: dict[str, list[Any]] = {}
    for module, start, duration in events:
        entry = found.setdefault(xla_function_name(module), [0, 0, set()])
        entry[0] += 1
        entry[1] += duration
        entry[2].update(i for i, (a, b) in enumerate(steps) if a <= start <= b)
    rows = [XlaCompile(fn, n, ps * 1e-12, len(in_steps)) for fn, (n, ps, in_steps) in found.items()]
    return tuple(sorted(rows, key=lambda c: c.seconds, reverse=True))
