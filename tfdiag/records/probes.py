"""What the optional probes record: raw, JSON-serialisable, frozen.

``Report.probes`` holds a :class:`Probes` when ``profile(..., sampling=True)`` or
``tf_profiler=True`` ran: a :class:`SamplingRecord` (the sampled call stacks of
one pass) and/or a :class:`TfProfile` (op-level figures read offline from the
TensorFlow profiler's trace with xprof). Each probe pass also keeps its own
iteration times, so its cost is measured against the unprofiled pass in every
run. The trace file itself is not JSON: it travels in memory (``trace_files``)
until :meth:`Report.save` writes it beside the report.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tfdiag.records.errors import InputError
from tfdiag.records.fields import Obj, count, items, row, seconds, text
from tfdiag.records.jax_profile import JaxProfile, jax_profile_from_json, jax_profile_to_json
from tfdiag.records.numbers import median

FrameKey = tuple[str, int, str]


@dataclass(frozen=True)
class SampledStack:
    """One distinct call stack seen by the sampler, root → leaf, below tfdiag's own loop."""

    frames: tuple[int, ...]
    samples: int
    seconds: float


@dataclass(frozen=True)
class SamplingRecord:
    """The sampling pass: every ``interval_s`` the calling thread's Python stack is read.

    ``frames`` are (file, first line, qualified name), the keys cProfile uses;
    ``outside_s`` is sampled time spent in tfdiag's timing loop between calls; ``cpu_s``
    the process's CPU time (every thread) while the sampler ran, None in older reports.
    """

    interval_s: float
    iteration_s: tuple[float, ...]
    frames: tuple[FrameKey, ...]
    stacks: tuple[SampledStack, ...]
    outside_s: float = 0.0
    cpu_s: float | None = None

    @property
    def samples(self) -> int:
        return sum(s.samples for s in self.stacks)

    @property
    def sampled_s(self) -> float:
        return sum(s.seconds for s in self.stacks)

    @property
    def median_s(self) -> float | None:
        return median(self.iteration_s)


@dataclass(frozen=True)
class OpRow:
    """One TensorFlow op in xprof's framework_op_stats: totals over the traced steps."""

    host_or_device: str
    type: str
    name: str
    occurrences: int
    self_s: float
    total_s: float


@dataclass(frozen=True)
class InputStage:
    """One tf.data iterator in xprof's input-pipeline analysis: totals over the traced steps.

    ``name`` is the iterator's path (``Iterator::Root::ParallelMapV2``), ``category``
    xprof's class of it (``Preprocessing``, ``Reading data on demand``...).
    """

    name: str
    count: int
    total_s: float
    self_s: float
    category: str = ""


@dataclass(frozen=True)
class PyFuncs:
    """``tf.py_function`` / ``tf.numpy_function`` ops in the trace, split by where they ran:
    inside a tf.data iterator (the input pipeline) or in the steps' own graphs and ops."""

    pipeline_s: float = 0.0
    pipeline_calls: int = 0
    step_s: float = 0.0
    step_calls: int = 0


@dataclass(frozen=True)
class XlaCompile:
    """XLA compilations of one function in the trace (its HLO modules, one executable per
    concrete input shape): how many, their seconds, and in how many traced steps."""

    function: str
    count: int
    seconds: float
    steps: int = 0


@dataclass(frozen=True)
class TfProfile:
    """The TF profiler pass, as xprof read it.

    Op times are totals over ``steps`` traced iterations (one ``Trace(step_num=i)``
    each). ``device_op_s`` and the copy times are ``None`` when the trace has no
    device (CPU only). ``breakdown_ms`` is xprof's average step-time breakdown,
    ``verdict`` its own conclusion, quoted. ``graph_builds`` counts tf.function
    graph-building events inside the traced steps (``None``: not readable).
    """

    steps: int
    iteration_s: tuple[float, ...]
    hardware: str
    host_op_s: float
    input_op_s: float
    device_op_s: float | None
    h2d_s: float | None
    d2h_s: float | None
    top_ops: tuple[OpRow, ...]
    op_rows: int
    step_ms: tuple[float, ...]
    breakdown_ms: tuple[tuple[str, float], ...]
    verdict: str
    advice: tuple[str, ...]
    graph_builds: int | None
    graph_builds_per_step: tuple[int, ...]
    host_tracer_level: int
    export_s: float = 0.0
    #: xprof's tf.data iterators, by self time (empty: no tf.data in the steps).
    input_stages: tuple[InputStage, ...] = ()
    py_funcs: PyFuncs | None = None
    #: Self time of TF ops that ran eagerly (one Python dispatch each), over all steps.
    eager_op_s: float = 0.0
    #: Self time of collective ops (all-reduce, broadcast, gather), over all steps.
    collective_op_s: float = 0.0
    #: ``(op type, occurrences, self seconds)`` per collective op type, over all steps.
    collective_ops: tuple[tuple[str, int, float], ...] = ()
    #: XLA compilations in the trace, by function, heaviest first (empty: none, or an
    #: older report).
    xla_compiles: tuple[XlaCompile, ...] = ()

    @property
    def has_device(self) -> bool:
        return self.device_op_s is not None

    @property
    def median_s(self) -> float | None:
        return median(self.iteration_s)

    @property
    def op_s(self) -> float:
        """All TF op self time (host + device), over all traced steps."""
        return self.host_op_s + (self.device_op_s or 0.0)


@dataclass(frozen=True)
class Probes:
    """The optional probes' records; ``None`` for a probe that did not run."""

    sampling: SamplingRecord | None = None
    tf_profile: TfProfile | None = None
    #: On Keras' JAX backend, the block traced with ``jax.profiler`` (:mod:`.jax_profile`).
    jax_profile: JaxProfile | None = None
    #: The TF profiler's logdir, ``relative path → bytes`` (not in JSON; see Report.save).
    trace_files: tuple[tuple[str, bytes], ...] = field(default=(), compare=False, repr=False)


# -- JSON --------------------------------------------------------------------------


def probes_to_json(probes: Probes | None) -> dict[str, Any] | None:
    if probes is None:
        return None
    return {
        "sampling": _sampling_to_json(probes.sampling),
        "tf_profile": _tf_to_json(probes.tf_profile),
        "jax_profile": jax_profile_to_json(probes.jax_profile),
    }


def _sampling_to_json(s: SamplingRecord | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {
        "interval_s": s.interval_s,
        "iteration_s": list(s.iteration_s),
        "outside_s": s.outside_s,
        "cpu_s": s.cpu_s,
        "frames": [list(f) for f in s.frames],
        "stacks": [[list(st.frames), st.samples, st.seconds] for st in s.stacks],
    }


def _tf_to_json(t: TfProfile | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {
        "steps": t.steps,
        "iteration_s": list(t.iteration_s),
        "hardware": t.hardware,
        "host_op_s": t.host_op_s,
        "input_op_s": t.input_op_s,
        "device_op_s": t.device_op_s,
        "h2d_s": t.h2d_s,
        "d2h_s": t.d2h_s,
        "top_ops": [
            [o.host_or_device, o.type, o.name, o.occurrences, o.self_s, o.total_s]
            for o in t.top_ops
        ],
        "op_rows": t.op_rows,
        "step_ms": list(t.step_ms),
        "breakdown_ms": [[k, v] for k, v in t.breakdown_ms],
        "verdict": t.verdict,
        "advice": list(t.advice),
        "graph_builds": t.graph_builds,
        "graph_builds_per_step": list(t.graph_builds_per_step),
        "host_tracer_level": t.host_tracer_level,
        "export_s": t.export_s,
        "input_stages": [
            [s.name, s.count, s.total_s, s.self_s, s.category] for s in t.input_stages
        ],
        "py_funcs": None if t.py_funcs is None else asdict(t.py_funcs),
        "eager_op_s": t.eager_op_s,
        "collective_op_s": t.collective_op_s,
        "collective_ops": [list(c) for c in t.collective_ops],
        "xla_compiles": [[c.function, c.count, c.seconds, c.steps] for c in t.xla_compiles],
    }


def probes_from_json(doc: Any) -> Probes | None:
    """Rebuild the probe records; a report without them (older ones too) gives ``None``.

    Raises:
        InputError: a part of the wrong type or out of range.
    """
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise InputError("not a valid report (probes is not an object)")
    d = Obj(doc, "probes")
    return Probes(
        sampling=_sampling_from_json(d.obj("sampling")),
        tf_profile=_tf(d.obj("tf_profile")),
        jax_profile=jax_profile_from_json(d.obj("jax_profile")),
    )


def _sampling_from_json(d: Obj | None) -> SamplingRecord | None:
    if d is None:
        return None
    frames = []
    for f in d.items("frames"):
        file, line, name = row(f, f"{d.at('frames')}[]", range(3, 4))
        where = f"{d.at('frames')}[]"
        frames.append((text(file, where), count(line, where, hi=10**9), text(name, where)))
    stacks = []
    for st in d.items("stacks"):
        ids, samples, secs = row(st, f"{d.at('stacks')}[]", range(3, 4))
        where = f"{d.at('stacks')}[]"
        index = tuple(count(i, where, hi=max(len(frames) - 1, 0)) for i in items(ids, where))
        if index and not frames:
            raise InputError(f"not a valid result ({where} refers to a frame out of range)")
        stacks.append(SampledStack(index, count(samples, where), seconds(secs, where)))
    return SamplingRecord(
        interval_s=d.seconds("interval_s", lo=1e-6),
        iteration_s=d.series("iteration_s"),
        frames=tuple(frames),
        stacks=tuple(stacks),
        outside_s=d.seconds("outside_s", 0.0),
        cpu_s=d.opt_seconds("cpu_s"),
    )


def _tf(d: Obj | None) -> TfProfile | None:
    if d is None:
        return None
    top_ops = []
    for op in d.items("top_ops"):
        h, t, n, o, own, total = row(op, f"{d.at('top_ops')}[]", range(6, 7))
        w = f"{d.at('top_ops')}[]"
        top_ops.append(
            OpRow(
                text(h, w), text(t, w), text(n, w), count(o, w), seconds(own, w), seconds(total, w)
            )
        )
    stages = []
    for st in d.items("input_stages"):
        n, c, total, own, cat = row(st, f"{d.at('input_stages')}[]", range(5, 6))
        w = f"{d.at('input_stages')}[]"
        stages.append(
            InputStage(text(n, w), count(c, w), seconds(total, w), seconds(own, w), text(cat, w))
        )
    breakdown = []
    for pair in d.items("breakdown_ms"):
        k, v = row(pair, f"{d.at('breakdown_ms')}[]", range(2, 3))
        breakdown.append(
            (text(k, f"{d.at('breakdown_ms')}[]"), seconds(v, f"{d.at('breakdown_ms')}[]"))
        )
    collectives = []
    for c in d.items("collective_ops"):
        w = f"{d.at('collective_ops')}[]"
        op_type, n, own = row(c, w, range(3, 4))
        collectives.append((text(op_type, w), count(n, w), seconds(own, w)))
    compiles = []
    for c in d.items("xla_compiles"):
        w = f"{d.at('xla_compiles')}[]"
        fn, n, secs, steps = row(c, w, range(4, 5))
        compiles.append(XlaCompile(text(fn, w), count(n, w), seconds(secs, w), count(steps, w)))
    return TfProfile(
        steps=d.count("steps", lo=1, hi=10**9),
        iteration_s=d.series("iteration_s"),
        hardware=d.text("hardware", ""),
        host_op_s=d.seconds("host_op_s"),
        input_op_s=d.seconds("input_op_s", 0.0),
        device_op_s=d.opt_seconds("device_op_s"),
        h2d_s=d.opt_seconds("h2d_s"),
        d2h_s=d.opt_seconds("d2h_s"),
        top_ops=tuple(top_ops),
        op_rows=d.count("op_rows", 0),
        step_ms=d.series("step_ms", hi=1e12),
        breakdown_ms=tuple(breakdown),
        verdict=d.text("verdict", ""),
        advice=d.texts("advice"),
        graph_builds=d.opt_count("graph_builds"),
        graph_builds_per_step=tuple(
            count(x, "probes.tf_profile.graph_builds_per_step[]")
            for x in d.items("graph_builds_per_step")
        ),
        host_tracer_level=d.count("host_tracer_level", 0, hi=10),
        export_s=d.seconds("export_s", 0.0),
        input_stages=tuple(stages),
        py_funcs=_py_funcs(d.obj("py_funcs")),
        eager_op_s=d.seconds("eager_op_s", 0.0),
        collective_op_s=d.seconds("collective_op_s", 0.0),
        collective_ops=tuple(collectives),
        xla_compiles=tuple(compiles),
    )


def _py_funcs(d: Obj | None) -> PyFuncs | None:
    if d is None:
        return None
    return PyFuncs(
        pipeline_s=d.seconds("pipeline_s", 0.0),
        pipeline_calls=d.count("pipeline_calls", 0),
        step_s=d.seconds("step_s", 0.0),
        step_calls=d.count("step_calls", 0),
    )
