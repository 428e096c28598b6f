"""The profile detectors: each reads one run's analysis and returns its evidence, or None.

The fix texts and thresholds are data, in :mod:`tfdiag.advise.table`; a detector
reads its thresholds from the :class:`~tfdiag.advise.finding.Context` and names a
fix variant when the call kind does not decide it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

from tfdiag.advise.finding import Context, Detection, Detector
from tfdiag.analysis.oplevel import op_figures
from tfdiag.analysis.pipeline import Analysis
from tfdiag.records.catalog import TRACERS, Category
from tfdiag.records.catalog.culprits import PIPELINE_BUILDERS
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.paths import normalize_path
from tfdiag.records.report import RunRecord
from tfdiag.records.stats import FunctionStat
from tfdiag.records.units import fmt_pct0 as _pct

# -- helpers ---------------------------------------------------------------------------


def _functions(report: RunRecord, path: str, name: str) -> Iterator[tuple[int, FunctionStat]]:
    for i, fn in enumerate(report.profile.functions):
        if fnmatch.fnmatchcase(normalize_path(fn.file), path) and (
            fnmatch.fnmatchcase(fn.name, name)
            or fnmatch.fnmatchcase(fn.name.rsplit(".", 1)[-1], name)
        ):
            yield i, fn


def _is_builder(name: str) -> bool:
    """Does ``name`` build an input pipeline (rather than read from one)?"""
    last = name.rsplit(".", 1)[-1]
    return any(
        fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(last, pattern)
        for pattern in PIPELINE_BUILDERS
    )


def _category(analysis: Analysis, i: int) -> Category | None:
    rule = analysis.rules[i]
    return rule.category if rule is not None else None


def _times(analysis: Analysis, i: int) -> str:
    """``3×`` (or ``0.5×``) per steady-state iteration."""
    return f"{analysis.steady_calls_per_iteration(i):.3g}×"


#: tf.function's own machinery, walked through when looking for who asked for a trace.
_TF_FUNCTION_INTERNALS = "tensorflow/python/eager/polymorphic_function/"


def _caller_chain(analysis: Analysis, i: int, stop: Category) -> list[int]:
    """Walk the heaviest caller edges up from ``i`` while frames are ``stop``, wrappers or
    tf.function's own machinery."""
    chain = []
    seen = {i}
    fn = analysis.steady.functions[i]
    while fn.callers:
        edge = max(fn.callers, key=lambda e: (e.cum_s, e.calls))
        if edge.caller in seen:
            break
        seen.add(edge.caller)
        chain.append(edge.caller)
        caller = analysis.steady.functions[edge.caller]
        plumbing = normalize_path(caller.file).startswith(_TF_FUNCTION_INTERNALS)
        if _category(analysis, edge.caller) not in (stop, Category.WRAPPER) and not plumbing:
            break
        fn = analysis.steady.functions[edge.caller]
    return chain


# -- detectors -------------------------------------------------------------------------


def per_call_input_pipeline(ctx: Context) -> Detection | None:
    report, analysis = ctx.record, ctx.analysis
    rows = [
        r
        for r in analysis.culprits
        if r.category is Category.INPUT_PIPELINE
        and _is_builder(report.profile.functions[r.index].name)
        and analysis.steady_calls_per_iteration(r.index) >= ctx.threshold("min_calls_per_iteration")
    ]
    if not rows or analysis.steady_s <= 0:
        return None
    top = max(rows, key=lambda r: analysis.steady.functions[r.index].cum_s)
    steady_fn = analysis.steady.functions[top.index]
    impact = min(steady_fn.cum_s / analysis.steady_s, 1.0)
    share = analysis.steady_share(Category.INPUT_PIPELINE)
    if impact < ctx.threshold("min_share"):
        return None
    evidence = [
        f"`{top.name}` runs {_times(analysis, top.index)} per iteration: "
        f"{_pct(impact)} of steady-state time (cumulative)",
        f"input pipeline self time: {_pct(share)} of steady-state time (non-overlapping)",
    ]
    for i, _ in _functions(
        report, "tensorflow/python/data/ops/iterator_ops.py", "*_create_iterator"
    ):
        evidence.append(f"tf.data iterators created: {_times(analysis, i)} per iteration")
    return Detection(max(impact, share), tuple(evidence), values={"method": report.call.method})


def per_iteration_tracing(ctx: Context) -> Detection | None:
    report, analysis = ctx.record, ctx.analysis
    tracers = [
        i
        for i, fn in enumerate(report.profile.functions)
        if fn.name.rsplit(".", 1)[-1] in TRACERS
        and _category(analysis, i) is Category.GRAPH_BUILDING
        and analysis.steady_calls_per_iteration(i) >= ctx.threshold("min_calls_per_iteration")
    ]
    if not tracers or analysis.steady_s <= 0:
        return None
    steady = analysis.steady.functions
    i = max(tracers, key=lambda t: (steady[t].primitive_calls, steady[t].cum_s))
    fn = steady[i]
    chain = _caller_chain(analysis, i, Category.GRAPH_BUILDING)
    origin = steady[chain[-1]] if chain else None
    via_data = bool(chain) and _category(analysis, chain[-1]) is Category.INPUT_PIPELINE
    share = analysis.steady_share(Category.GRAPH_BUILDING)
    cum_share = min(fn.cum_s / analysis.steady_s, 1.0)
    evidence = [
        f"`{fn.short_name}` runs {_times(analysis, i)} per iteration "
        f"({fn.primitive_calls} traces in {analysis.iterations} steady-state calls): "
        f"{_pct(cum_share)} of steady-state time (cumulative)",
        f"graph building self time: {_pct(share)} of steady-state time (non-overlapping)",
    ]
    if origin is not None:
        evidence.append(f"traced from `{origin.short_name}`")
    variant = "via-data" if via_data else "retrace"
    return Detection(max(cum_share, share), tuple(evidence), variant=variant)


def eager_execution(ctx: Context) -> Detection | None:
    report, analysis = ctx.record, ctx.analysis
    eager = list(_functions(report, "~", "*TFE_Py_FastPathExecute*"))
    if not eager or analysis.steady_s <= 0:
        return None
    i, _ = eager[0]
    ops = analysis.steady_calls_per_iteration(i)
    eager_s = analysis.steady.functions[i].self_s * analysis.own[i].get(Category.OP_EXECUTION, 0)
    graph_calls = sum(
        analysis.steady_calls_per_iteration(j)
        for j, _ in _functions(
            report,
            "tensorflow/python/eager/polymorphic_function/concrete_function.py",
            "*_call_flat",
        )
    )
    share = min(eager_s / analysis.steady_s, 1.0)
    if (
        ops < ctx.threshold("min_ops_per_iteration")
        or graph_calls >= ctx.threshold("max_graph_calls_per_iteration")
        or share < ctx.threshold("min_share")
    ):
        return None
    evidence = (
        f"{ops:.0f} eager op dispatches per iteration (`TFE_Py_FastPathExecute`), "
        f"{_pct(share)} of steady-state time",
        f"graph function calls: {graph_calls:.1f} per iteration",
    )
    return Detection(share, evidence)


def build_dominated(ctx: Context) -> Detection | None:
    report, analysis = ctx.record, ctx.analysis
    timing = report.timing
    evidence = []
    if analysis.first_call_s is not None:
        # The cold call's profiled time less one steady iteration is the one-time cost.
        build_s = max(analysis.first_call_s - analysis.steady_s / analysis.iterations, 0.0)
        basis = "one-time cost (cold call minus one steady iteration)"
    else:
        build_s, basis = analysis.build_s, "build (functions called 1-2 times)"
    build_share = build_s / analysis.total_s if analysis.total_s else 0.0
    evidence.append(f"{basis}: {build_s:.3f} s, {_pct(build_share)} of profiled time")
    ratio = None
    median = timing.median_s
    if timing.first_call_s is not None and median:
        ratio = timing.first_call_s / median
        evidence.insert(
            0,
            f"first call {timing.first_call_s:.3f} s vs {median:.4f} s per later call "
            f"({ratio:.0f}×)",
        )
    if not (
        build_share >= ctx.threshold("min_share")
        or (
            ratio is not None
            and ratio >= ctx.threshold("cold_ratio")
            and build_share >= ctx.threshold("min_share_when_cold")
        )
    ):
        return None
    return Detection(build_share, tuple(evidence))


def conversion_overhead(ctx: Context) -> Detection | None:
    report, analysis = ctx.record, ctx.analysis
    tc = analysis.steady_share(Category.TENSOR_CONVERSION)
    oc = analysis.steady_share(Category.OUTPUT_CONVERSION)
    if tc + oc < ctx.threshold("min_share"):
        return None
    evidence = [
        f"tensor conversion: {_pct(tc)}, output conversion: {_pct(oc)} of steady-state time "
        "(non-overlapping)"
    ]
    float64 = [a for a in report.call.args if "float64" in a]
    if float64:
        evidence.append(f"input is float64 ({float64[0]}); Keras models compute in float32")
    return Detection(tc + oc, tuple(evidence))


def callback_overhead(ctx: Context) -> Detection | None:
    share = ctx.analysis.steady_share(Category.CALLBACKS)
    if share < ctx.threshold("min_share"):
        return None
    return Detection(
        share, (f"callbacks & progress bar: {_pct(share)} of steady-state time (non-overlapping)",)
    )


def _op_time_evidence(report: RunRecord) -> tuple[float, str, bool] | None:
    """The model's op time / wall time from the TF profiler probe, when it ran, and whether
    XProf itself calls the run input-bound."""
    tf = report.probes.tf_profile if report.probes is not None else None
    ops = op_figures(tf) if tf is not None else None
    if tf is None or ops is None:
        return None
    input_bound = (
        "input-bound" in tf.verdict.lower() and "not input-bound" not in tf.verdict.lower()
    )
    text = (
        f"TF profiler: the model's ops take {ops.compute_s * 1e3:.1f} ms of "
        f"{ops.wall_s * 1e3:.1f} ms per iteration ({_pct(ops.compute_share)} of wall time; "
        f"tf.data ops, not counted: {ops.input_s * 1e3:.1f} ms)"
    )
    return min(ops.compute_share, 1.0), text, input_bound


def compute_bound(ctx: Context) -> Detection | None:
    report, analysis = ctx.record, ctx.analysis
    ox = analysis.steady_share(Category.OP_EXECUTION)
    python_side = sum(
        analysis.steady_share(c)
        for c in (Category.INPUT_PIPELINE, Category.GRAPH_BUILDING, Category.TENSOR_CONVERSION)
    )
    op_time = _op_time_evidence(report)
    minimum = ctx.threshold("min_share")
    if op_time is not None:  # measured op time decides, the Python profile is context
        if op_time[0] < minimum or op_time[2]:
            return None
        ox = op_time[0]
    elif ox < minimum or ox <= python_side:
        return None
    return Detection(
        ox,
        (
            *((op_time[1],) if op_time is not None else ()),
            f"op execution: {_pct(analysis.steady_share(Category.OP_EXECUTION))} of steady-state "
            f"time (non-overlapping); input pipeline, tracing and conversion together: "
            f"{_pct(python_side)}",
        ),
    )


def user_finding(rule: FindingRule) -> Detector:
    """The detector of a finding the user defined as data: the heaviest function matching
    the rule's globs, by cumulative steady-state time."""

    def detect(ctx: Context) -> Detection | None:
        report, analysis = ctx.record, ctx.analysis
        if analysis.steady_s <= 0:
            return None
        matched = [
            (analysis.steady.functions[i].cum_s, i)
            for i, _ in _functions(report, rule.path, rule.function)
        ]
        if not matched:
            return None
        cum_s, i = max(matched)
        share = min(cum_s / analysis.steady_s, 1.0)
        if share < rule.min_share:
            return None
        fn = report.profile.functions[i]
        return Detection(
            share,
            (
                f"`{fn.short_name}` runs {_times(analysis, i)} per iteration: {_pct(share)} of "
                "steady-state time (cumulative)",
            ),
        )

    return detect
