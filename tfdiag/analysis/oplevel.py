"""Op-level figures derived from the TF profiler's record: the model's op time against
wall time, input waits, and the trace's graph builds against the call counts.

Pure functions, no TensorFlow; :mod:`tfdiag.analysis.xprof` reads xprof's output into
the record.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from tfdiag.analysis.pipeline import Analysis
from tfdiag.analysis.xprof import BREAKDOWN
from tfdiag.records.catalog import Category
from tfdiag.records.catalog.backends import profiler_of
from tfdiag.records.numbers import median
from tfdiag.records.probes import TfProfile
from tfdiag.records.report import RunRecord


@dataclass(frozen=True)
class OpFigures:
    """Op time against wall time, per traced iteration (same pass, same clock; both means).

    ``op_s`` is every TF op's self time; the model's own compute (``compute_s``) leaves out
    what is not the model computing: tf.data's ops (on their own threads), Python called
    from ops (``tf.py_function``/``numpy_function``, in the pipeline or in the step), and
    collectives (waiting for other replicas). ``input_wait_s`` is XProf's input time of a
    step: the caller waiting for the next batch.
    """

    op_s: float
    wall_s: float
    input_s: float
    device_s: float | None
    copy_s: float | None
    pyfunc_pipeline_s: float = 0.0
    pyfunc_step_s: float = 0.0
    collective_s: float = 0.0
    eager_s: float = 0.0
    input_wait_s: float = 0.0

    @property
    def share(self) -> float:
        """TF op time / wall time; above 1 when ops run in parallel on several threads."""
        return self.op_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def compute_s(self) -> float:
        """The model's own ops: op time less tf.data's, Python ops' and collectives'."""
        others = self.input_s + self.pyfunc_pipeline_s + self.pyfunc_step_s + self.collective_s
        return max(self.op_s - others, 0.0)

    @property
    def compute_share(self) -> float:
        """The model's op time / wall time: what compute-bound means."""
        return min(self.compute_s / self.wall_s, 1.0) if self.wall_s > 0 else 0.0

    @property
    def input_wait_share(self) -> float:
        """The share of a step spent waiting for input (XProf's input-bound figure)."""
        return min(self.input_wait_s / self.wall_s, 1.0) if self.wall_s > 0 else 0.0

    @property
    def overhead_share(self) -> float:
        """Wall time outside the model's ops: Python, framework and input waits."""
        return max(1.0 - self.compute_share, 0.0)


_INPUT_LABEL = dict(BREAKDOWN)["infeed"]


def op_figures(tf: TfProfile) -> OpFigures | None:
    if tf.steps < 1 or not tf.iteration_s:
        return None
    n = tf.steps
    copy = None if tf.h2d_s is None else tf.h2d_s + (tf.d2h_s or 0.0)
    funcs = tf.py_funcs
    input_ms = dict(tf.breakdown_ms).get(_INPUT_LABEL, 0.0)
    return OpFigures(
        op_s=tf.op_s / n,
        wall_s=statistics.fmean(tf.iteration_s),  # a mean, like the op sums over steps
        input_s=tf.input_op_s / n,
        device_s=None if tf.device_op_s is None else tf.device_op_s / n,
        copy_s=None if copy is None else copy / n,
        pyfunc_pipeline_s=(funcs.pipeline_s / n) if funcs else 0.0,
        pyfunc_step_s=(funcs.step_s / n) if funcs else 0.0,
        collective_s=tf.collective_op_s / n,
        eager_s=tf.eager_op_s / n,
        input_wait_s=input_ms * 1e-3,
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


def retracing_check(report: RunRecord, a: Analysis) -> RetracingCheck | None:
    """Compare ``tf.function-graph_building`` events per traced step with the call counts."""
    tf = report.probes.tf_profile if report.probes is not None else None
    if tf is None or tf.steps < 1 or tf.graph_builds is None:
        return None
    tracers = [
        i
        for i in a.with_role("tracer")
        if (rule := a.rules[i]) is not None and rule.category is Category.GRAPH_BUILDING
    ]
    if tracers:
        i = max(tracers, key=lambda t: a.steady.functions[t].primitive_calls)
        calls, name = a.steady_calls_per_iteration(i), report.profile.functions[i].short_name
        classification = a.classes[i].describe()
    else:
        calls, name, classification = 0.0, None, "not called"
    return RetracingCheck(tf.graph_builds / tf.steps, calls, name, classification)


def slowdowns(record: RunRecord) -> tuple[tuple[str, float], ...]:
    """Each probe's median iteration over the plain median: ``(("cProfile", 1.4), ...)``.

    The plain iterations are the timed ones no tracer slowed. The TF profiler's ratio (the
    JAX profiler's, on JAX) is its traced block over them (or, in a report whose TF profiler
    ran a pass of its own, that pass); the sampler watches the timed pass throughout, so it
    has a ratio only in such older reports, where it had a pass of its own too.
    """
    t, probes = record.timing, record.probes
    base = median(t.plain_s)
    if not base:
        return ()
    passes = [("cProfile", t.profiled_iteration_s)]
    sampling = probes.sampling if probes is not None else None
    if sampling is not None and sampling.iteration_s != t.iteration_s:
        passes.append(("sampling", sampling.iteration_s))
    tf = probes.tf_profile if probes is not None else None
    tracer = profiler_of(record.environment.framework)
    if t.traced and len(t.iteration_s) > t.traced:
        passes.append((tracer, t.iteration_s[: t.traced]))
    elif tf is not None and not t.traced:
        passes.append(("TF profiler", tf.iteration_s))
    return tuple((name, m / base) for name, times in passes if (m := median(times)) is not None)
