"""Build synthetic profiles without TensorFlow: a call tree in, a ProfileStats out.

``Node(file, name, self_s, calls, children)`` describes one call site; the same
(file, line, name) appearing at several places in the tree is merged into one
function with one caller edge per parent, exactly as cProfile records it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tfdiag.analysis.xprof import BREAKDOWN
from tfdiag.records.callbacks import PyCallback
from tfdiag.records.function_stat import CallerEdge, FunctionStat
from tfdiag.records.lines import LinesRecord
from tfdiag.records.probes import InputStage, OpRow, Probes, PyFuncs, TfProfile
from tfdiag.records.report import CallInfo, Environment, Timing
from tfdiag.records.stats import ProfileStats
from tfdiag.records.traces import TraceEvent
from tfdiag.results.report import Report

SITE = "/venv/lib/python3.11/site-packages/"


@dataclass
class Node:
    file: str
    name: str
    self_s: float
    calls: int = 1
    children: list[Node] = field(default_factory=list)
    line: int = 1

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.file, self.line, self.name)

    def cum_s(self) -> float:
        return self.self_s + sum(c.cum_s() for c in self.children)


def build_stats(roots: list[Node]) -> ProfileStats:
    totals: dict[tuple[str, int, str], list[float]] = {}
    edges: dict[tuple[str, int, str], dict[tuple[str, int, str], list[float]]] = {}

    def visit(node: Node, parent: Node | None) -> None:
        t = totals.setdefault(node.key, [0, 0.0, 0.0])
        t[0] += node.calls
        t[1] += node.self_s
        t[2] += node.cum_s()
        if parent is not None:
            e = edges.setdefault(node.key, {}).setdefault(parent.key, [0, 0.0, 0.0])
            e[0] += node.calls
            e[1] += node.self_s
            e[2] += node.cum_s()
        for child in node.children:
            visit(child, node)

    for root in roots:
        visit(root, None)
    keys = list(totals)
    index = {k: i for i, k in enumerate(keys)}
    functions = []
    for key in keys:
        calls, self_s, cum_s = totals[key]
        callers = tuple(
            CallerEdge(index[c], int(v[0]), int(v[0]), v[1], v[2])
            for c, v in edges.get(key, {}).items()
        )
        functions.append(
            FunctionStat(key[0], key[1], key[2], int(calls), int(calls), self_s, cum_s, callers)
        )
    return ProfileStats(tuple(functions))


def make_report(
    roots: list[Node],
    iterations: int,
    *,
    cold: list[Node] | None = None,
    method: str = "predict",
    first_call_s: float | None = None,
    iteration_s: tuple[float, ...] = (),
    target: str = "",
    args: tuple[str, ...] = (),
    kwargs: tuple[tuple[str, str], ...] = (),
    facts: tuple[tuple[str, str], ...] = (),
    traces: tuple[TraceEvent, ...] = (),
    py_callbacks: tuple[PyCallback, ...] = (),
    tf_profile: TfProfile | None = None,
    lines: LinesRecord | None = None,
    call_line: tuple[str, int, str] = ("", 0, ""),
) -> Report:
    """A Report over a synthetic profile; ``cold`` is the tree of the first call alone.

    ``target``, ``args``, ``kwargs`` and ``facts`` describe the call (as
    :func:`~tfdiag.capture.environment.describe_call` would); ``traces``, ``py_callbacks``
    and ``tf_profile`` are what the capture hooks and the TF profiler would have recorded.
    """
    return Report(
        call=CallInfo(
            label=f"Model.{method}",
            target=target,
            method=method,
            flavour="keras3",
            args=args,
            kwargs=kwargs,
            facts=facts,
            file=call_line[0],
            line=call_line[1],
            code=call_line[2],
        ),
        environment=Environment(
            python="3.11", versions={"tensorflow": "2.21.0", "keras": "3.15.1"}
        ),
        timing=Timing(
            iterations=iterations,
            profiled_calls=iterations + 1,
            first_call_s=first_call_s,
            iteration_s=iteration_s,
        ),
        profile=build_stats(roots),
        cold_profile=build_stats(cold) if cold is not None else None,
        created="2026-11-29T00:00:00+00:00",
        probes=Probes(tf_profile=tf_profile) if tf_profile is not None else None,
        traces=traces,
        py_callbacks=py_callbacks,
        lines=lines,
    )


def trace(
    call: int,
    params: tuple[tuple[str, str], ...],
    *,
    function: str = "step",
    file: str = "/home/me/train.py",
    line: int = 10,
    name: str = "step",
    function_id: int = 1,
) -> TraceEvent:
    """One graph trace as :class:`~tfdiag.capture.traces.TraceRecorder` records it."""
    return TraceEvent(call, function, file, line, name, params, function_id)


def tensor(*shape: int, dtype: str = "float32") -> str:
    """A tensor parameter's trace type, as TensorFlow writes it."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    return f"TensorSpec(shape=({dims}), dtype=tf.{dtype}, name=None)"


_INPUT_WAIT = dict(BREAKDOWN)["infeed"]


def tf_record(
    *,
    wall_s: float,
    op_s: float,
    steps: int = 3,
    input_op_s: float = 0.0,
    input_wait_s: float = 0.0,
    input_stages: tuple[InputStage, ...] = (),
    py_funcs: PyFuncs | None = None,
    top_ops: tuple[OpRow, ...] = (),
    eager_op_s: float = 0.0,
    collective_op_s: float = 0.0,
) -> TfProfile:
    """A CPU-only TF profiler record of ``steps`` iterations of ``wall_s`` each.

    ``op_s`` and the other op times are per iteration (the record keeps totals);
    ``input_wait_s`` is XProf's input time of one step.
    """
    return TfProfile(
        steps=steps,
        iteration_s=(wall_s,) * steps,
        hardware="CPU_ONLY",
        host_op_s=op_s * steps,
        input_op_s=input_op_s * steps,
        device_op_s=None,
        h2d_s=None,
        d2h_s=None,
        top_ops=top_ops,
        op_rows=len(top_ops),
        step_ms=(wall_s * 1e3,) * steps,
        breakdown_ms=((_INPUT_WAIT, input_wait_s * 1e3),),
        verdict="",
        advice=(),
        graph_builds=0,
        graph_builds_per_step=(0,) * steps,
        host_tracer_level=1,
        input_stages=input_stages,
        py_funcs=py_funcs,
        eager_op_s=eager_op_s * steps,
        collective_op_s=collective_op_s * steps,
    )


def keras3_predict_report(
    *, first_call_s: float = 0.2, iteration_s: tuple[float, ...] = (0.05,) * 10
) -> Report:
    """A Keras-3-shaped `predict` × 10 whose steady state is a data adapter built per call."""
    keras = SITE + "keras/src/"
    adapter = Node(
        keras + "trainers/data_adapters/array_data_adapter.py",
        "ArrayDataAdapter.get_tf_dataset",
        0.6,
        11,
    )
    root = Node(
        keras + "backend/tensorflow/trainer.py",
        "TensorFlowTrainer.predict",
        0.05,
        11,
        children=[adapter],
    )
    cold = [Node(root.file, root.name, 0.01, 1, children=[Node(adapter.file, adapter.name, 0.1)])]
    return make_report([root], 10, cold=cold, first_call_s=first_call_s, iteration_s=iteration_s)


def full_set_report(*, first_call_s: float = 0.2, trace_mb: int = 0) -> Report:
    """:func:`keras3_predict_report` with sampled stacks and a TF profiler trace, so its save
    writes the whole set: ``.tfdiag.json``, ``.prof``, ``.tfprofile/``, ``.pyisession``,
    ``.sampling.html`` and ``.speedscope.json``. ``trace_mb`` pads the trace to that many
    MiB (a save that spends its time writing)."""
    from dataclasses import replace

    from tfdiag.records.probes import Probes, SampledStack, SamplingRecord

    report = keras3_predict_report(first_call_s=first_call_s)
    sampling = SamplingRecord(
        interval_s=0.005,
        iteration_s=(0.05,) * 10,
        frames=((SITE + "keras/src/trainers/trainer.py", 10, "Trainer.predict"),),
        stacks=(SampledStack((0,), 8, 0.04),),
    )
    blob = b"trace %r" % first_call_s + b"\0" * (trace_mb << 20)
    trace = (("plugins/profile/run/host.xplane.pb", blob),)
    return replace(report, probes=Probes(sampling=sampling, trace_files=trace))
