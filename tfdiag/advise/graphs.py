"""Detectors of how ops run: ops dispatched eagerly one by one, and Python called back from
inside the step's graph (graphs traced again: :mod:`tfdiag.advise.tracing`)."""

from __future__ import annotations

import re

from tfdiag.advise.eager_calls import EagerCalls, eager_calls
from tfdiag.advise.evidence import (
    category_of,
    functions,
    graph_calls_per_iteration,
    keras_call,
    pct,
    python_callbacks,
    tf_figures,
    with_role,
)
from tfdiag.advise.finding import Context, Detection
from tfdiag.analysis.pipeline import Analysis
from tfdiag.records.catalog import Category
from tfdiag.records.catalog.apis import api_of
from tfdiag.records.paths import is_user_code, normalize_path
from tfdiag.records.report import RunRecord
from tfdiag.records.stats import FunctionStat


def eager_execution(ctx: Context) -> Detection | None:
    """Ops dispatched one at a time from Python, with no graph function doing the work.

    The impact is what a graph would remove: everything but the ops' own kernel time and
    what other findings account for (input, callbacks, conversions of the inputs, models
    built per call, the user's own Python).
    """
    report, analysis = ctx.record, ctx.analysis
    eager = list(with_role(report, analysis, "eager-op"))
    if not eager or analysis.steady_s <= 0:
        return None
    i, _ = eager[0]
    ops = analysis.steady_calls_per_iteration(i)
    graph_calls = graph_calls_per_iteration(report, analysis)
    if ops < ctx.threshold("min_ops_per_iteration"):
        return None
    kernel = _kernel_share(ctx, i)
    if graph_calls >= ctx.threshold("max_graph_calls_per_iteration"):
        return _eager_around_graphs(ctx, i, ops, graph_calls, kernel)
    kept, builders = _kept_and_builders(report, analysis)
    removable = max(1.0 - kernel - kept - builders, 0.0)
    if removable < ctx.threshold("min_share"):
        return None
    evidence = [
        f"{ops:.0f} eager op dispatches per iteration (`TFE_Py_FastPathExecute`) and "
        f"{graph_calls:.1f} graph function calls: every op runs one at a time from Python",
        f"the ops' own time is {pct(kernel)} of steady-state time; the Python around them "
        f"(layers, op wrappers, argument conversion), {pct(removable)}, is what a graph removes",
    ]
    variant = None
    if report.call.fact("functions_run_eagerly") == "True":
        variant = "run-functions-eagerly"
        evidence.insert(0, "`tf.config.functions_run_eagerly()` is True")
    elif (bypassed := _functions_run_as_python(report, analysis)) is not None:
        variant = "run-functions-eagerly"
        evidence.insert(0, bypassed)
    elif report.call.fact("run_eagerly") == "True" or _runs_keras_step_eagerly(report):
        variant = "run-eagerly"
        evidence.insert(0, "the model's Keras step runs as Python, op by op (not as a graph)")
    elif _runs(report, analysis, "*GradientTape.gradient") or _training_call(report):
        variant = "train-step"
    elif _runs(report, analysis, "*Layer.__call__"):
        variant = "model"
    return Detection(removable, tuple(evidence), variant=variant)


_TRAINING = re.compile(r"\btraining\s*=\s*True\b")


def _training_call(report: RunRecord) -> bool:
    """Is the profiled call a training forward pass (``model(x, training=True)``, as a
    gradient tape's step makes it: its tape is outside the call)?"""
    kwargs = dict(report.call.kwargs)
    return kwargs.get("training") == "True" or bool(_TRAINING.search(report.call.code or ""))


def _runs(report: RunRecord, analysis: Analysis, name: str) -> bool:
    """Does a TensorFlow/Keras function of that name run on every steady iteration?"""
    return any(analysis.steady_calls_per_iteration(i) >= 1 for i, _ in functions(report, "*", name))


def _kernel_share(ctx: Context, i: int) -> float:
    """The eager ops' kernels as a share of the steady state: TFE_Py_FastPathExecute's own
    time is the op's kernel plus its C++ dispatch (about `dispatch_s` per op: a scalar add
    costs ~30 µs there on a 2-core CPU); the dispatch is what a graph removes, the kernel
    stays. The TF profiler's op time (its eager ops' when it tells them apart), when it
    ran, bounds it."""
    analysis = ctx.analysis
    dispatch = analysis.steady.functions[i]
    kernel_s = max(dispatch.self_s - dispatch.calls * ctx.threshold("dispatch_s"), 0.0)
    kernel = analysis.of_steady(kernel_s)
    figures = tf_figures(ctx.record)
    if figures is not None and figures.wall_s > 0:
        # Every kernel is an op: the TF profiler's op time bounds them, its eager ops' time
        # more tightly.
        ops = figures.eager_s if figures.eager_s > 0 else figures.op_s
        kernel = min(ops / figures.wall_s, kernel)
    return kernel


def _kept_and_builders(report: RunRecord, analysis: Analysis) -> tuple[float, float]:
    """What a graph would not remove: the input, callbacks, user code and output shares,
    and the largest model builder's (other findings' causes)."""
    kept = sum(
        analysis.steady_share(c)
        for c in (
            Category.INPUT_PIPELINE,
            Category.CALLBACKS,
            Category.USER_CODE,
            Category.OUTPUT_CONVERSION,
        )
    )
    builders = max(
        (
            min(analysis.of_steady(analysis.steady.functions[j].cum_s), 1.0)
            for j in analysis.with_role("model-builder")
        ),
        default=0.0,
    )
    return kept, builders


def _eager_around_graphs(
    ctx: Context, i: int, ops: float, graph_calls: float, kernel: float
) -> Detection | None:
    """The step is a graph, but ops also run eagerly around it, found by their volume: the
    eager ops per iteration × what each costs in Python (the op wrapper that dispatches it,
    its C++ dispatch) less their kernels (``tf.summary`` histograms written every step, a
    metric updated outside the step, a model called eagerly beside a compiled train step)."""
    report, analysis = ctx.record, ctx.analysis
    fns = analysis.steady.functions
    dispatch = fns[i]
    wrappers = {e.caller for e in dispatch.callers}
    python_s = sum(fns[w].cum_s for w in wrappers) if wrappers else dispatch.cum_s
    # Eager ops that another finding's cause runs are its own: the ones Keras' data adapter
    # runs to build a pipeline per call (per-call-input-pipeline), a callback's, a conversion's.
    python_s = max(python_s, dispatch.cum_s) * _unclaimed(analysis, i)
    # Found by volume: the op wrappers and their dispatch, less the kernels.
    removable = max(min(analysis.of_steady(python_s), 1.0) - kernel, 0.0)
    # And by the framework calls your code makes that dispatch them (a model called for
    # actions, image ops on one image): their layers' and wrappers' Python, less their kernels.
    calls = _eager_calls(ctx, i)
    found: tuple[int, str] | None = None
    caller = "your code"
    if calls is not None:
        own = min(analysis.of_steady(calls.seconds), 1.0)
        own -= min(analysis.of_steady(calls.kernel_s), kernel)
        if own > removable:
            removable = own
            found = (calls.entry, fns[calls.entry].short_name)
            caller = _caller_name(fns[calls.caller])
    if removable < ctx.threshold("min_share"):
        return None
    if found is None:
        found = _eager_entry(report, analysis, max(wrappers, key=lambda w: fns[w].cum_s, default=i))
        if found is not None:
            # The Python it runs around the ops (tf.summary's, a layer's) goes with them; a
            # graph it calls does not.
            around = fns[found[0]].cum_s - _graph_time_under(report, analysis, found[0])
            around *= _unclaimed(analysis, found[0])
            removable = max(removable, min(analysis.of_steady(max(around, 0.0)), 1.0) - kernel)
    if keras_call(report, analysis) is None:
        # A loop of the user's own: everything but the graph calls, the kernels and what
        # other findings account for is the Python of ops run one at a time.
        kept, builders = _kept_and_builders(report, analysis)
        graphs = min(analysis.of_steady(_graph_calls_s(report, analysis)), 1.0)
        removable = max(removable, 1.0 - kernel - kept - builders - graphs)
    each = python_s / dispatch.calls if dispatch.calls else 0.0
    evidence = [
        f"{ops:.0f} eager op dispatches per iteration (`TFE_Py_FastPathExecute`) beside "
        f"{graph_calls:.3g} graph function calls: besides the graph, ops run one at a time "
        f"from Python, {each * 1e6:.0f} µs each with their op wrappers",
        f"dispatching them is {pct(removable)} of steady-state time (kernels left out): what "
        "running them inside the graph, or less often, removes",
    ]
    values = {"entry": "the code around your `tf.function`"}
    culprit, part_of = None, None
    if found is not None:
        values["entry"] = found[1]
        evidence.append(f"most of them come from `{found[1]}`, called from {caller}")
        if _builds(fns[found[0]]):
            # The ops are a build's own work (an `adapt`, a layer's constructor): building
            # once removes them, so the finding is part of the rebuild, anchored at its line.
            culprit, part_of = found[0], "model-rebuilt-per-call"
    return Detection(
        removable,
        tuple(evidence),
        variant="build-ops" if part_of else "around-graph",
        values=values,
        culprit=culprit,
        part_of=part_of,
    )


def _builds(fn: FunctionStat) -> bool:
    """Is ``fn`` a build-type API (a constructor or a setup call: the API table's
    ``construct`` and ``setup`` natures)?"""
    match = api_of(fn.file, fn.name)
    return match is not None and match.nature in ("construct", "setup")


def _eager_calls(ctx: Context, i: int) -> EagerCalls | None:
    report, analysis = ctx.record, ctx.analysis
    builders = set(analysis.with_role("model-builder"))
    builders.update(j for name in _MAKERS for j, _ in functions(report, "*", name))
    return eager_calls(
        analysis,
        i,
        dispatch_s=ctx.threshold("dispatch_s"),
        excluded=lambda k: k in builders or category_of(analysis, k) in _CLAIMED,
        unclaimed=lambda u: _unclaimed(analysis, u),
        graph_s_under=lambda k: _graph_time_under(report, analysis, k),
    )


#: Objects made, not ops run: a variable, a layer or optimizer constructed, once per call in
#: the user's loop, dispatches ops a graph cannot take over (variables are made outside it).
_MAKERS = ("*.__init__", "*.__new__", "*Metaclass.__call__")


def _caller_name(fn: FunctionStat) -> str:
    """Your `policy` (agent.py:12)."""
    return f"your `{fn.name}` ({fn.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{fn.line})"


#: Categories whose eager ops belong to another finding (the input pipeline built per call,
#: callbacks, conversions, tracing), not to eager execution.
_CLAIMED = (
    Category.INPUT_PIPELINE,
    Category.CALLBACKS,
    Category.TENSOR_CONVERSION,
    Category.GRAPH_BUILDING,
    Category.OUTPUT_CONVERSION,
)


def _unclaimed(analysis: Analysis, i: int) -> float:
    """The share of function ``i``'s own time no other finding's category claims."""
    own = analysis.own[i]
    return max(1.0 - sum(own.get(c, 0.0) for c in _CLAIMED), 0.0)


def _graph_calls_s(report: RunRecord, analysis: Analysis) -> float:
    """Steady seconds in graph calls (``_call_flat``)."""
    return sum(analysis.steady.functions[g].cum_s for g in analysis.with_role("graph-call"))


def _graph_time_under(report: RunRecord, analysis: Analysis, j: int) -> float:
    """Steady seconds of graph calls (``_call_flat``) whose heaviest caller path passes
    through function ``j``."""
    fns = analysis.steady.functions
    total = 0.0
    for g in analysis.with_role("graph-call"):
        i, seen = g, {g}
        while fns[i].callers:
            i = max(fns[i].callers, key=lambda e: e.cum_s).caller
            if i == j:
                total += fns[g].cum_s
                break
            if i in seen:
                break
            seen.add(i)
    return total


def _eager_entry(report: RunRecord, analysis: Analysis, i: int) -> tuple[int, str] | None:
    """The TensorFlow/Keras function the user's code called that dispatches the eager ops
    (``histogram``, ``Layer.__call__``): up the heaviest callers to the frame below the
    user's."""
    fns = analysis.steady.functions
    seen, below = {i}, i
    while fns[i].callers:
        caller = max(fns[i].callers, key=lambda e: e.cum_s).caller
        if caller in seen:
            return None
        seen.add(caller)
        if is_user_code(fns[caller].file):
            path = normalize_path(fns[below].file)
            if analysis.has_role(below, "function-machinery") or "trainer" in path:
                return None  # a graph call or a Keras loop: not only eager work
            return below, fns[below].short_name
        if category_of(analysis, caller) is not Category.WRAPPER:
            below = caller
        i = caller
    return None


def _functions_run_as_python(report: RunRecord, analysis: Analysis) -> str | None:
    """``tf.function`` s called on every iteration that never reach their graph
    (``Function._call``): ``tf.config.run_functions_eagerly(True)`` makes ``__call__`` run
    the Python function instead, whatever it was set by."""
    called = max(
        (analysis.steady_calls_per_iteration(i) for i in analysis.with_role("function-call")),
        default=0.0,
    )
    graphed = max(
        (analysis.steady_calls_per_iteration(i) for i in analysis.with_role("function-graph")),
        default=0.0,
    )
    if called < 1 or graphed > 0:
        return None
    return (
        f"a `tf.function` is called {called:.3g}× per iteration but never runs a graph "
        "(`Function._call` is never reached): its Python runs eagerly"
    )


# -- Python inside the graph ----------------------------------------------------------------


def python_in_graph(ctx: Context) -> Detection | None:
    """``tf.py_function`` / ``tf.numpy_function`` inside the step: every call stops the
    graph, takes the GIL and runs Python, one step at a time."""
    figures = tf_figures(ctx.record)
    tf = ctx.record.probes.tf_profile if ctx.record.probes is not None else None
    if figures is None or tf is None or tf.py_funcs is None or figures.wall_s <= 0:
        return None
    share = min(figures.pyfunc_step_s / figures.wall_s, 1.0)
    if share < ctx.threshold("min_share"):
        return None
    funcs = tf.py_funcs
    per_call = funcs.step_s / max(funcs.step_calls, 1)
    evidence = [
        f"Python ops (`tf.py_function`/`tf.numpy_function`) run {funcs.step_calls / tf.steps:.3g}× "
        f"per iteration inside the step's graph, {per_call * 1e3:.1f} ms each: {pct(share)} of "
        "the time (TF profiler)",
    ]
    where = [o.name for o in tf.top_ops if o.type in ("PyFunc", "EagerPyFunc", "PyFuncStateless")]
    if where and "/" in where[0]:
        evidence.append(f"the op is `{where[0]}`")
    named = python_callbacks(ctx.record)
    if named:
        evidence.append(f"the Python it runs: {named}")
    return Detection(share, tuple(evidence))


def _runs_keras_step_eagerly(record: RunRecord) -> bool:
    """A Keras ``train_step``/``test_step``/``predict_step`` ran, and no graph function did:
    the model's step runs eagerly (``run_eagerly=True``)."""
    steps = ("train_step", "test_step", "predict_step")
    ran = any(
        fn.name.endswith(steps) and fn.calls > 0 and "keras" in normalize_path(fn.file)
        for fn in record.profile.functions
    )
    return ran and not any(fn.name.endswith("_call_flat") for fn in record.profile.functions)
