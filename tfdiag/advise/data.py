"""Detectors of the data's way in: a step that waits for its input, and inputs converted to
tensors on every call."""

from __future__ import annotations

from tfdiag.advise.evidence import (
    iterators_per_read,
    keras_call,
    pct,
    python_callbacks,
    tf_figures,
    with_role,
)
from tfdiag.advise.finding import Context, Detection
from tfdiag.analysis.attribute import edge_weights
from tfdiag.analysis.pipeline import Analysis
from tfdiag.records.catalog import Category, input_stages
from tfdiag.records.paths import is_user_code
from tfdiag.records.probes import InputStage, TfProfile
from tfdiag.records.report import RunRecord


def _stage(name: str) -> tuple[str, str]:
    """``(kind, label)`` of one iterator path's last stage (the catalog's stage names)."""
    last = name.rsplit("::", 1)[-1].split("[", 1)[0]
    for key, kind, label in input_stages():
        if last == key:
            return kind, label
    return "other", f"`{last}`"


def _slowest(stages: tuple[InputStage, ...]) -> InputStage | None:
    """The bottleneck: the stage with the most self time, leaving out the wrappers
    (``Root``, ``Prefetch``) that only wait for the stage below."""
    real = [
        s
        for s in stages
        if s.name.rsplit("::", 1)[-1].split("[", 1)[0] not in ("Root", "Prefetch", "Iterator")
    ]
    return max(real, key=lambda s: s.self_s) if real else None


def _transform_s(tf: TfProfile) -> float:
    """tf.data's time per iteration in the stages that do the user's work (a ``map``, a
    generator, reading files, Python in the pipeline: what ``cache()``, a parallel or
    vectorised ``map`` removes), not the per-element plumbing (slices, ``shuffle``,
    ``batch``, ``prefetch``) that any pipeline of that many elements costs."""
    stages = sum(s.self_s for s in tf.input_stages if _stage(s.name)[0] != "other")
    funcs = tf.py_funcs.pipeline_s if tf.py_funcs is not None else 0.0
    return (stages + funcs) / tf.steps if tf.steps else 0.0


def _nested_windows(stages: tuple[InputStage, ...]) -> int | None:
    """How many per-element ``FlatMap[i]`` iterators a ``window(...).flat_map(...)``
    pipeline ran (``…::FlatMap::Window`` is its outer stage); None for another pipeline."""
    if not any(s.name.endswith("FlatMap::Window") for s in stages):
        return None
    nested = {
        s.name.partition("FlatMap[")[2].partition("]")[0] for s in stages if "FlatMap[" in s.name
    }
    return len(nested) if nested else None


def input_bound(ctx: Context) -> Detection | None:
    """The step waits for its next batch: the input pipeline, not the model, sets the pace."""
    report, analysis = ctx.record, ctx.analysis
    figures = tf_figures(report)
    tf = report.probes.tf_profile if report.probes is not None else None
    evidence: list[str] = []
    variant = "map"
    shared = False
    if figures is not None and tf is not None and figures.wall_s > 0:
        wait = figures.input_wait_share
        impact = wait
        if wait >= ctx.threshold("min_share"):
            evidence.append(
                f"TF profiler: each iteration waits {figures.input_wait_s * 1e3:.1f} ms of "
                f"{figures.wall_s * 1e3:.1f} ms for its input ({pct(wait)})"
            )
        elif (
            figures.device_s is None
            and figures.input_s >= figures.wall_s * ctx.threshold("min_pipeline_work")
            and _transform_s(tf) >= figures.wall_s * ctx.threshold("min_pipeline_work")
        ):
            # No device: tf.data's threads run on the cores the step's ops need, so a heavy
            # pipeline slows every step without the step waiting for a batch.
            impact = min(figures.input_s / figures.op_s, 1.0) if figures.op_s > 0 else 0.0
            evidence.append(
                f"TF profiler: tf.data's ops take {figures.input_s * 1e3:.1f} ms per "
                f"iteration of {figures.wall_s * 1e3:.1f} ms, on the same CPU cores as the "
                f"model's ops ({pct(impact)} of all op time): the step waits for its input "
                f"{pct(wait)}, but shares the cores with it"
            )
            shared = True
        else:
            return None
        slowest = _slowest(tf.input_stages)
        if slowest is not None:
            variant, label = _stage(slowest.name)
            evidence.append(
                f"the slowest stage is {label}: `{slowest.name}`, "
                f"{slowest.self_s / tf.steps * 1e3:.1f} ms of its own per iteration"
            )
        windows = _nested_windows(tf.input_stages)
        if windows is not None:
            variant = "window"
            evidence.append(
                "`window().flat_map()` makes a nested dataset per window: a `Window` stage "
                f"under `FlatMap`, and per-window `FlatMap[i]` iterators ({windows} kept in "
                "the trace's stages)"
            )
        funcs = tf.py_funcs
        if funcs is not None and funcs.pipeline_calls:
            evidence.append(
                f"Python in the pipeline (`tf.py_function`/`numpy_function`/a generator): "
                f"{funcs.pipeline_calls / tf.steps:.3g} calls per iteration, "
                f"{funcs.pipeline_s / tf.steps * 1e3:.1f} ms per iteration"
            )
            if variant != "generator":
                variant = "py-function"
        if shared and variant not in ("generator", "py-function"):
            variant = "cpu-shared"
    else:
        impact, line = _waiting_without_tf(report, analysis)
        if impact < ctx.threshold("min_share"):
            return None
        evidence.append(line)
    pydataset = _py_dataset(report, analysis)
    if pydataset is not None:
        variant, line = pydataset
        evidence.append(line)
    values: dict[str, str] = {}
    fresh = iterators_per_read(report, analysis)
    if fresh is not None:
        created, reads = fresh
        variant = "iterator-per-step"
        evidence.append(
            f"a new tf.data iterator is created {created:.3g}× per iteration, for "
            f"{reads:.3g} `next()` call(s) each: every batch starts the pipeline from scratch "
            "(its shuffle buffer refilled, its prefetch started again)"
        )
    elements = _elements_read(report, analysis)
    if elements is not None and elements[0] >= ctx.threshold("min_elements_per_call"):
        per, each_s = elements
        variant, values["elements"] = "per-element", f"{per:.0f}"
        evidence.append(
            f"your loop calls the dataset iterator's `next()` {per:.0f}× per call, "
            f"{each_s * 1e6:.0f} µs each: one element at a time"
        )
    named = python_callbacks(report)
    if named:
        evidence.append(f"the Python TensorFlow calls back: {named}")
        if variant in (None, "map") and any(
            cb.kind in ("py_function", "numpy_function") for cb in report.py_callbacks
        ):
            variant = "py-function"  # no TF profiler (a JAX model fed by tf.data): the hook says
    return Detection(impact, tuple(evidence), variant=variant, values=values)


def _elements_read(record: RunRecord, analysis: Analysis) -> tuple[float, float] | None:
    """A user's own loop over a tf.data iterator: ``(next() calls per iteration, seconds
    each)`` of the busiest iterator; None when Keras reads the data (its steps)."""
    if keras_call(record, analysis) is not None:
        return None
    best: tuple[float, float] | None = None
    for i, _ in with_role(record, analysis, "iterator-next"):
        fn = analysis.steady.functions[i]
        per = analysis.steady_calls_per_iteration(i)
        if fn.calls and (best is None or per > best[0]):
            best = (per, fn.cum_s / fn.calls)
    return best


def _waiting_without_tf(record: RunRecord, analysis: Analysis) -> tuple[float, str]:
    """Without the TF profiler: the caller's time reading the next batch (a tf.data
    iterator's ``__next__``), or in the user's own data code that Keras runs for each batch
    (a PyDataset's ``__getitem__``). Building a pipeline is not waiting for it (that is
    per-call-input-pipeline's), so the input pipeline's whole share is not used."""
    best = 0.0
    for i, _ in with_role(record, analysis, "iterator-next"):
        best = max(best, analysis.of_steady(analysis.steady.functions[i].cum_s))
    for i, fn in enumerate(analysis.steady.functions):
        if is_user_code(fn.file) and analysis.own[i].get(Category.INPUT_PIPELINE, 0.0) > 0.5:
            best = max(best, analysis.of_steady(fn.cum_s))
    share = min(best, 1.0)
    return share, f"reading the next batch takes {pct(share)} of steady-state time"


def _py_dataset(record: RunRecord, analysis: Analysis) -> tuple[str, str] | None:
    """A Keras PyDataset (or tf_keras ``Sequence``) feeding the call: ``(variant, evidence)``,
    the variant saying where its workers are set and whether it has several already."""
    flavour = "sequence" if record.call.flavour == "tf_keras" else "pydataset"
    for cb in record.py_callbacks:
        if cb.kind == "pydataset":
            kind = "Sequence" if "(a Sequence, " in cb.function else "PyDataset"
            settings = cb.function.partition(f"(a {kind}, ")[2].rstrip(")")
            workers = settings.partition("workers=")[2].partition(",")[0]
            return _workers_variant(flavour, workers), (
                f"the input is a Keras {kind} ({settings}), read through tf.data"
            )
    for key, value in record.call.facts:
        if key.endswith(".kind") and value == "PyDataset":
            label = key[: -len(".kind")]
            workers = record.call.fact(f"{label}.workers") or ""
            cls = record.call.fact(f"{label}.class") or "PyDataset"
            shown = f" with workers={workers}" if workers else ""
            return _workers_variant(flavour, workers), f"the input is `{cls}` (a PyDataset){shown}"
    for i, fn in enumerate(record.profile.functions):
        if fn.name.endswith("__getitem__") and is_user_code(fn.file):
            if analysis.own[i].get(Category.INPUT_PIPELINE, 0.0) > 0.5:
                return flavour, (
                    f"the user's `{fn.short_name}` runs on the training thread (no workers)"
                )
    return None


def _workers_variant(flavour: str, workers: str) -> str:
    """``pydataset``/``sequence``, or ``…-workers`` when it has several workers already."""
    return f"{flavour}-workers" if workers.isdigit() and int(workers) >= 2 else flavour


# -- conversions -----------------------------------------------------------------------------


def input_conversion_s(record: RunRecord, analysis: Analysis) -> float:
    """Steady seconds converting the call's own inputs: tensor-conversion time whose call
    path does not come from an op converting its arguments (as every eager op does: the
    ``op-internal`` role)."""
    fns = analysis.steady.functions
    memo: dict[int, float] = {}
    total = 0.0
    for i, fn in enumerate(fns):
        share = analysis.own[i].get(Category.TENSOR_CONVERSION, 0.0)
        if share > 0 and fn.self_s > 0:
            total += fn.self_s * share * (1.0 - _internal(analysis, memo, i))
    return total


def _internal(analysis: Analysis, memo: dict[int, float], i: int, depth: int = 0) -> float:
    """The share of function ``i``'s time called from an op's own conversions (a function,
    not a closure that calls itself: that cycle would hold the analysis until the cyclic
    collector ran)."""
    if i in memo:
        return memo[i]
    memo[i] = 0.0  # a cycle counts as not internal
    fns = analysis.steady.functions
    fn = fns[i]
    if not fn.callers or depth > 40:
        return 0.0
    frac = 0.0
    for w, e in zip(edge_weights(fn), fn.callers):
        rule = analysis.rules[e.caller]
        if rule is not None and rule.category is Category.WRAPPER or _converts(analysis, e.caller):
            # a conversion's own helpers (array_ops' autopacking of a nested list) sit in
            # tensorflow/python/ops too: whose conversion it is, the chain's callers decide
            frac += w * _internal(analysis, memo, e.caller, depth + 1)
        elif analysis.has_role(e.caller, "op-internal"):
            frac += w
        elif _passes_through(analysis, e.caller):
            frac += w * _internal(analysis, memo, e.caller, depth + 1)
    memo[i] = frac
    return frac


def _converts(analysis: Analysis, i: int) -> bool:
    """Is most of frame ``i``'s own time tensor conversion?"""
    return analysis.own[i].get(Category.TENSOR_CONVERSION, 0.0) > 0.5


def _passes_through(analysis: Analysis, i: int) -> bool:
    """Is frame ``i`` part of a conversion (or a wrapper), so its own callers decide?"""
    rule = analysis.rules[i]
    if rule is not None and rule.category is Category.WRAPPER:
        return True
    return _converts(analysis, i) or (
        rule is None and not is_user_code(analysis.steady.functions[i].file)
    )


#: How a tensor argument is described (``EagerTensor float32 (32, 4)``).
_TENSOR_TYPES = frozenset({"EagerTensor", "Tensor", "SymbolicTensor", "ResourceVariable"})


#: The calls whose output conversion is their metrics made Python numbers (Keras'
#: ``pythonify_logs``), not a prediction copied back to NumPy.
_LOGS_METHODS = frozenset({"train_on_batch", "test_on_batch", "fit", "evaluate"})


def conversion_overhead(ctx: Context) -> Detection | None:
    report, analysis = ctx.record, ctx.analysis
    if analysis.steady_s <= 0:
        return None
    # Inputs that are tensors already have nothing to convert: what tensor conversion is left
    # is TensorFlow binding them to the call (a tf.function's arguments), not the user's to fix.
    given = [*report.call.args, *(v for _, v in report.call.kwargs)]
    tensors = bool(given) and all(d.split(" ", 1)[0] in _TENSOR_TYPES for d in given)
    # No argument passed again by any later call (a request handler's new data): each is
    # converted once, the cost of having new data, not a conversion to move out of the loop.
    # One array passed again (a training set indexed inside the step) is converted again.
    same = report.call.fact("calls.same_inputs")
    later = int(report.call.fact("calls.later") or 0)
    new_data = same == "0" and later > 0
    tc = 0.0 if tensors or new_data else analysis.of_steady(input_conversion_s(report, analysis))
    oc = analysis.steady_share(Category.OUTPUT_CONVERSION)
    if tc + oc < ctx.threshold("min_share"):
        return None
    evidence = [
        f"converting the call's inputs to tensors: {pct(tc)}, outputs back to NumPy: "
        f"{pct(oc)} of steady-state time (non-overlapping)"
    ]
    if new_data:
        evidence.append(
            f"each of the {later} later calls was given new arguments: converting them is "
            "the cost of new data, and not counted"
        )
    elif same is not None and later > 0:
        evidence.append(
            f"{same} of the {later} later calls passed an argument the call before had "
            "passed, converted again"
        )
    float64 = [a for a in report.call.args if "float64" in a]
    if float64 and tc > 0:
        evidence.append(f"input is float64 ({float64[0]}); Keras models compute in float32")
    lists = [a for a in report.call.args if a.startswith("[")]
    if oc > tc:
        variant = "logs" if report.call.method in _LOGS_METHODS else "outputs"
    else:
        variant = "float64" if float64 else "python-lists" if lists else "inputs"
    return Detection(tc + oc, tuple(evidence), variant=variant)
