"""The profile detectors: each reads the analysis and returns evidence and a fix, or None."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfdiag.advise.finding import Detection
from tfdiag.catalog import Category, normalize_path
from tfdiag.catalog.culprits import PIPELINE_BUILDERS
from tfdiag.stats import FunctionStat

if TYPE_CHECKING:
    from tfdiag.analysis import Analysis
    from tfdiag.report import Report


# -- helpers ---------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _functions(report: Report, path: str, name: str) -> Iterator[tuple[int, FunctionStat]]:
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


def _method(report: Report) -> str:
    return report.call.method or ""


def _fix_for_per_call_data(report: Report) -> str:
    method = _method(report)
    if method == "predict":
        return (
            "For in-memory batches call `model.predict_on_batch(x)` or "
            "`model(x, training=False)` (inside a `tf.function` for repeated calls) instead of "
            "`model.predict(x)`; for many batches make one `predict` call over a "
            "`tf.data.Dataset` built once."
        )
    if method == "fit":
        return (
            "Call `fit` once with `epochs=...` over all the data (or over a `tf.data.Dataset` "
            "built once, with `steps_per_epoch`) instead of calling `fit` per batch; for a "
            "custom loop use `train_on_batch(x, y)` or a `tf.function` train step with "
            "`tf.GradientTape`."
        )
    if method == "evaluate":
        return "Call `test_on_batch(x, y)` per batch, or one `evaluate` over a `tf.data.Dataset`."
    if method.endswith("_on_batch"):
        return (
            f"`{method}` still wraps each batch in a data iterator; a `tf.function` step "
            "(`tf.GradientTape` for training, `model(x, training=False)` for inference) "
            "called with tensors avoids it, or one `fit`/`predict` over a `tf.data.Dataset`."
        )
    return (
        "Build the input pipeline (`tf.data.Dataset`) once, outside the repeated call, and "
        "iterate over it; for single in-memory batches call the model directly."
    )


# -- detectors -------------------------------------------------------------------------


def per_call_input_pipeline(report: Report, analysis: Analysis) -> Detection | None:
    rows = [
        r
        for r in analysis.culprits
        if r.category is Category.INPUT_PIPELINE
        and _is_builder(report.profile.functions[r.index].name)
        and analysis.steady_calls_per_iteration(r.index) >= 0.5
    ]
    if not rows or analysis.steady_s <= 0:
        return None
    top = max(rows, key=lambda r: analysis.steady.functions[r.index].cum_s)
    steady_fn = analysis.steady.functions[top.index]
    impact = min(steady_fn.cum_s / analysis.steady_s, 1.0)
    share = analysis.steady_share(Category.INPUT_PIPELINE)
    if impact < 0.10:
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
    fix = _fix_for_per_call_data(report) + " " + _MEASURE_ON_YOUR_MODEL
    return Detection(max(impact, share), tuple(evidence), fix)


_MEASURE_ON_YOUR_MODEL = (
    "Measure the alternatives on your own model and data: `tfdiag.compare(model, x)` "
    "(`python -m tfdiag compare`) times each and recommends the fastest."
)


_TRACERS = ("_create_concrete_function", "func_graph_from_py_func", "_create_graph_function")


def per_iteration_tracing(report: Report, analysis: Analysis) -> Detection | None:
    tracers = [
        i
        for i, fn in enumerate(report.profile.functions)
        if fn.name.rsplit(".", 1)[-1] in _TRACERS
        and _category(analysis, i) is Category.GRAPH_BUILDING
        and analysis.steady_calls_per_iteration(i) >= 0.5
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
    if via_data:
        fix = (
            "The traces are the tf.data functions of the pipeline built on every call: the fix "
            "for `per-call-input-pipeline` removes them too."
        )
    else:
        fix = (
            "Something is retraced on every call: create the `tf.function` once, outside the "
            "loop; pass tensors (not Python numbers) of a fixed shape and dtype; give it an "
            "`input_signature` or `reduce_retracing=True`."
        )
    return Detection(max(cum_share, share), tuple(evidence), fix)


def eager_execution(report: Report, analysis: Analysis) -> Detection | None:
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
    if ops < 10 or graph_calls >= 1 or share < 0.05:
        return None
    evidence = (
        f"{ops:.0f} eager op dispatches per iteration (`TFE_Py_FastPathExecute`), "
        f"{_pct(share)} of steady-state time",
        f"graph function calls: {graph_calls:.1f} per iteration",
    )
    fix = (
        "Run the step as a graph: wrap it in `tf.function` (for a model call, "
        "`tf.function(lambda x: model(x, training=False))`), and do not compile with "
        "`run_eagerly=True`."
    )
    return Detection(share, evidence, fix)


def build_dominated(report: Report, analysis: Analysis) -> Detection | None:
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
    if not (build_share >= 0.5 or (ratio is not None and ratio >= 10 and build_share >= 0.2)):
        return None
    fix = (
        "This is one-time cost: make one warm-up call before timing or serving, keep the model "
        "and its compiled functions alive (no `compile()`, `clear_session()` or model rebuild "
        "inside the loop), and judge speed on the steady state."
    )
    return Detection(build_share, tuple(evidence), fix)


def conversion_overhead(report: Report, analysis: Analysis) -> Detection | None:
    tc = analysis.steady_share(Category.TENSOR_CONVERSION)
    oc = analysis.steady_share(Category.OUTPUT_CONVERSION)
    if tc + oc < 0.10:
        return None
    evidence = [
        f"tensor conversion: {_pct(tc)}, output conversion: {_pct(oc)} of steady-state time "
        "(non-overlapping)"
    ]
    float64 = [a for a in report.call.args if "float64" in a]
    if float64:
        evidence.append(f"input is float64 ({float64[0]}); Keras models compute in float32")
    fix = (
        "Convert inputs once, outside the loop: `x = tf.convert_to_tensor(x, tf.float32)` and "
        "pass the tensor; keep outputs as tensors when the next step is TensorFlow."
    )
    return Detection(tc + oc, tuple(evidence), fix)


def callback_overhead(report: Report, analysis: Analysis) -> Detection | None:
    share = analysis.steady_share(Category.CALLBACKS)
    if share < 0.05:
        return None
    return Detection(
        share,
        (f"callbacks & progress bar: {_pct(share)} of steady-state time (non-overlapping)",),
        "Pass `verbose=0` (or `verbose=2`), drop callbacks you don't need, and raise "
        "`steps_per_execution` in `compile()` so callbacks run once per several batches.",
    )


def _op_time_evidence(report: Report) -> tuple[float, str, bool] | None:
    """The model's op time / wall time from the TF profiler probe, when it ran, and whether
    XProf itself calls the run input-bound."""
    from tfdiag.oplevel import op_figures

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


def compute_bound(report: Report, analysis: Analysis) -> Detection | None:
    ox = analysis.steady_share(Category.OP_EXECUTION)
    python_side = sum(
        analysis.steady_share(c)
        for c in (Category.INPUT_PIPELINE, Category.GRAPH_BUILDING, Category.TENSOR_CONVERSION)
    )
    op_time = _op_time_evidence(report)
    if op_time is not None:  # measured op time decides, the Python profile is context
        if op_time[0] < 0.5 or op_time[2]:
            return None
        ox = op_time[0]
    elif ox < 0.5 or ox <= python_side:
        return None
    return Detection(
        ox,
        (
            *((op_time[1],) if op_time is not None else ()),
            f"op execution: {_pct(analysis.steady_share(Category.OP_EXECUTION))} of steady-state "
            f"time (non-overlapping); input pipeline, tracing and conversion together: "
            f"{_pct(python_side)}",
        ),
        "The time is in TensorFlow ops, so Python-side changes won't help: make the work "
        "cheaper (a smaller model or batch, `jit_compile=True` in `compile()`, mixed precision "
        "on a GPU) or run it on faster hardware.",
    )
