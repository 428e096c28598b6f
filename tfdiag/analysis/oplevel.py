"""Op-level figures: read xprof's tool output (plain JSON) into a :class:`TfProfile`.

Pure functions, no TensorFlow: the TF profiler probe converts its trace with
``xprof.convert.raw_to_tool_data.xspace_to_tool_data`` and hands the JSON of the
``framework_op_stats`` and ``overview_page`` tools here. Both are lists of
Google-Charts data tables (``cols``, ``rows``, ``p``); tables are found by the
properties they carry, not by position, so a reordered xprof still reads.
"""

from __future__ import annotations

import html
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tfdiag.analysis.pipeline import analysis_of
from tfdiag.records.catalog import TRACERS, Category
from tfdiag.records.probes import OpRow, TfProfile
from tfdiag.records.report import RunRecord

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


def parse_op_stats(doc: Any) -> OpStats:
    """Read xprof's ``framework_op_stats`` JSON."""
    tables = [t for t in _tables(doc) if t.get("cols")]
    if not tables:
        raise XprofFormatError("framework_op_stats has no table")
    ops = []
    for r in table_rows(tables[0]):
        op_type, name = str(r.get("type") or ""), str(r.get("operation") or "")
        if op_type == "IDLE":
            continue
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
    )


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
    )


# -- derived views -----------------------------------------------------------------


@dataclass(frozen=True)
class OpFigures:
    """Op time against wall time, per traced iteration (same pass, same clock; both means)."""

    op_s: float
    wall_s: float
    input_s: float
    device_s: float | None
    copy_s: float | None

    @property
    def share(self) -> float:
        """TF op time / wall time; above 1 when ops run in parallel on several threads."""
        return self.op_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def compute_s(self) -> float:
        """Op time less tf.data's: the model's own ops (tf.data runs on its own threads)."""
        return max(self.op_s - self.input_s, 0.0)

    @property
    def compute_share(self) -> float:
        """The model's op time / wall time: what compute-bound means."""
        return self.compute_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def overhead_share(self) -> float:
        """Wall time outside the model's ops: Python, framework and input waits."""
        return max(1.0 - self.compute_share, 0.0)


def op_figures(tf: TfProfile) -> OpFigures | None:
    if tf.steps < 1 or not tf.iteration_s:
        return None
    n = tf.steps
    copy = None if tf.h2d_s is None else tf.h2d_s + (tf.d2h_s or 0.0)
    return OpFigures(
        op_s=tf.op_s / n,
        wall_s=statistics.fmean(tf.iteration_s),  # a mean, like the op sums over steps
        input_s=tf.input_op_s / n,
        device_s=None if tf.device_op_s is None else tf.device_op_s / n,
        copy_s=None if copy is None else copy / n,
    )


@dataclass(frozen=True)
class RetracingCheck:
    """Graph building seen in the trace vs traces counted by cProfile, per iteration."""

    trace_per_step: float
    calls_per_iteration: float
    function: str | None
    classification: str

    @property
    def agree(self) -> bool:
        return abs(self.trace_per_step - self.calls_per_iteration) < 0.5


def retracing_check(report: RunRecord) -> RetracingCheck | None:
    """Compare ``tf.function-graph_building`` events per traced step with the call counts."""
    tf = report.probes.tf_profile if report.probes is not None else None
    if tf is None or tf.steps < 1 or tf.graph_builds is None:
        return None
    a = analysis_of(report)
    tracers = [
        i
        for i, fn in enumerate(report.profile.functions)
        if fn.name.rsplit(".", 1)[-1] in TRACERS
        and (rule := a.rules[i]) is not None
        and rule.category is Category.GRAPH_BUILDING
    ]
    if tracers:
        i = max(tracers, key=lambda t: a.steady.functions[t].primitive_calls)
        calls, name = a.steady_calls_per_iteration(i), report.profile.functions[i].short_name
        classification = a.classes[i].describe()
    else:
        calls, name, classification = 0.0, None, "not called"
    return RetracingCheck(tf.graph_builds / tf.steps, calls, name, classification)
