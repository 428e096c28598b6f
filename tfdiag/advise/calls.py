"""Detectors of how the work is cut into calls: a pipeline built on every call, the fixed
cost of many short epochs, of many tiny steps, and a model or ``tf.function`` rebuilt on
every call."""

from __future__ import annotations

from tfdiag.advise import keras_jax, remedies, work
from tfdiag.advise.evidence import (
    graph_calls_per_iteration,
    iterators_per_read,
    keras_call,
    keras_steps,
    one_long_call,
    pct,
    per_iteration,
    rebuilt_between_calls,
    steady_share,
    step_hooks_per_iteration,
    steps_per_epoch_of_batches,
    tf_figures,
    times,
    with_role,
)
from tfdiag.advise.finding import Context, Detection
from tfdiag.analysis.lines import UserLine
from tfdiag.analysis.pipeline import Analysis
from tfdiag.records.catalog import Category
from tfdiag.records.catalog.backends import JAX
from tfdiag.records.paths import is_user_code
from tfdiag.records.report import RunRecord
from tfdiag.records.units import fmt_s


def per_call_input_pipeline(ctx: Context) -> Detection | None:
    report, analysis = ctx.record, ctx.analysis
    steps = keras_steps(report, analysis)
    calls = steps.calls if steps is not None else 1.0
    epochs = steps.epochs_per_call if steps is not None else 0.0
    keras = keras_call(report, analysis)
    rows = []
    for r in analysis.culprits:
        if r.category is not Category.INPUT_PIPELINE:
            continue
        if not analysis.has_role(r.index, "pipeline-builder"):
            continue  # reads the next batch from a pipeline rather than builds one
        per = analysis.steady_calls_per_iteration(r.index)
        if per < ctx.threshold("min_calls_per_iteration"):
            continue
        if epochs >= 2 and per / calls >= epochs:  # once per epoch: per-epoch-overhead's
            continue
        if (
            analysis.has_role(r.index, "iterator-builder")
            and per < 2
            and not steps
            and keras is None
        ):
            continue  # the user's own pass over a dataset built once: reading it needs one
        rows.append(r)
    if not rows or analysis.steady_s <= 0:
        return None
    if one_long_call(report, analysis):
        # its set-up is paid once per call (a 64-batch fit was told to call train_on_batch)
        return None
    top = max(rows, key=lambda r: analysis.steady.functions[r.index].cum_s)
    impact = steady_share(analysis, top.index)
    share = analysis.steady_share(Category.INPUT_PIPELINE)
    if impact < ctx.threshold("min_share"):
        return None
    evidence = [
        f"`{top.name}` runs {times(analysis, top.index)} per iteration: "
        f"{pct(impact)} of steady-state time (cumulative)",
        f"input pipeline self time: {pct(share)} of steady-state time (non-overlapping)",
    ]
    for i, _ in with_role(report, analysis, "iterator-create"):
        evidence.append(f"tf.data iterators created: {times(analysis, i)} per iteration")
    call = keras
    if call is not None and call.looped:
        evidence.insert(
            0, f"`{call.method}` is called {call.per_iteration:.3g}× per iteration of your code"
        )
    method = call.method if call is not None else report.call.method
    variant = None
    if analysis.has_role(top.index, "iterator-builder"):
        fresh = iterators_per_read(report, analysis)
        if fresh is not None:
            variant = "iterator-per-step"
            evidence.append(
                f"each iterator serves {fresh[1]:.3g} `next()` call(s): a new one per batch"
            )
    return Detection(
        impact, tuple(evidence), variant=variant, values={"method": method}, culprit=top.index
    )


def per_epoch_overhead(ctx: Context) -> Detection | None:
    """One ``fit`` of many short epochs: each epoch re-creates its data iterator and runs
    the epoch callbacks, which cost more than its few steps."""
    report, analysis = ctx.record, ctx.analysis
    steps = keras_steps(report, analysis)
    if steps is None or steps.kind != "train" or analysis.steady_s <= 0:
        return None
    if steps.epochs_per_call < ctx.threshold("min_epochs") or steps.per_epoch > ctx.threshold(
        "max_steps_per_epoch"
    ):
        return None
    step_s = _step_function_s(report, analysis)
    impact = max(1.0 - analysis.of_steady(step_s), 0.0)
    if impact < ctx.threshold("min_share"):
        return None
    per_epoch = analysis.steady_s / analysis.iterations / steps.epochs
    evidence = [
        f"`fit` runs {steps.epochs_per_call:.0f} epochs of {steps.per_epoch:.3g} step(s) each "
        f"per call: {fmt_s(per_epoch)} per epoch, of which the steps themselves are "
        f"{pct(analysis.of_steady(step_s))}",
    ]
    iterators = per_iteration(analysis, with_role(report, analysis, "iterator-object"))
    if iterators >= steps.epochs:
        evidence.append(
            f"a tf.data iterator is created {iterators / steps.epochs:.3g}× per epoch "
            f"({iterators:.3g}× per iteration)"
        )
    validation = step_hooks_per_iteration(report, analysis, "test") / steps.epochs
    variant = None
    if validation >= 1:
        variant = "validation"
        evidence.append(
            f"validation runs after every epoch: {validation:.3g} validation step(s) per epoch, "
            "each time with its own data iterator and callbacks"
        )
    return Detection(
        impact,
        tuple(evidence),
        variant=variant,
        values={
            "epochs": f"{steps.epochs_per_call:.0f}",
            "steps": f"{steps.per_epoch:.3g}",
            "validation_steps": f"{validation:.3g}",
        },
    )


def _step_function_s(record: RunRecord, analysis: Analysis) -> float:
    """Steady seconds inside the Keras step function (or any tf.function call), the step's
    own work: the heaviest function with the ``step`` role, cumulative."""
    return max(
        (analysis.steady.functions[i].cum_s for i in analysis.with_role("step")), default=0.0
    )


def per_step_overhead(ctx: Context) -> Detection | None:
    """Many tiny steps per call: the fixed cost of each step (a graph call, callbacks, logs,
    reading the next batch) outweighs the model's work in it."""
    report, analysis = ctx.record, ctx.analysis
    if analysis.steady_s <= 0:
        return None
    steps = keras_steps(report, analysis)
    per_epoch = steps_per_epoch_of_batches(report)
    per_call_s = analysis.steady_s / analysis.iterations
    kind: str | None
    if per_epoch is not None:
        # Each iteration is one of fit's batches: the epoch's step count is the fit's own.
        # With steps_per_execution > 1 an iteration is that many steps in one graph call: the
        # fixed cost is already shared (and the fix would be what the program does).
        if (report.call.fact("steps_per_execution") or "1") not in ("1", "None"):
            return None
        count, what, kind = float(per_epoch), "Keras steps per epoch", "train"
        # A batch's time is the timed median (no profiler attached) when there is one.
        per_iteration_s = (report.timing.median_s or per_call_s) * per_epoch
    elif steps is not None:
        # Steps within one Keras call's epoch: an epoch or a call per step is per-epoch or
        # per-call overhead, reported there.
        per = "epoch" if steps.kind == "train" else "call"
        count, what, kind = steps.per_epoch, f"Keras steps per {per}", steps.kind
        per_iteration_s = per_call_s / max(steps.epochs, 1.0)
    elif keras_call(report, analysis) is None:
        count, what = graph_calls_per_iteration(report, analysis), "graph function calls per call"
        per_iteration_s, kind = per_call_s, None
    else:
        return None  # a Keras *_on_batch call per step: per-call-input-pipeline's
    if count < ctx.threshold("min_steps_per_iteration"):
        return None
    if per_iteration_s / count > ctx.threshold("max_step_s"):
        return None  # not tiny steps: whatever slows them is not a step's fixed cost
    figures = tf_figures(report)
    if ctx.backend == JAX.name:
        work_share, basis = keras_jax.work_share(ctx)
    elif figures is not None and figures.wall_s > 0:
        python_ops = figures.pyfunc_step_s / figures.wall_s
        work_share = min(figures.compute_share + figures.input_wait_share + python_ops, 1.0)
        basis = "the TF profiler"
    else:
        execute = sum(
            analysis.steady.functions[i].self_s for i, _ in with_role(report, analysis, "op-run")
        )
        work_share = min(analysis.of_steady(execute), 1.0)
        basis = "TFE_Py_Execute's time"
    # What the callbacks' hooks run is callback-overhead's (a heavy callback is a cause of
    # its own, with its own fix), not the fixed cost of a step; tfdiag's own hooks are no one's.
    callbacks = work.callbacks_share(report, analysis)
    overhead = max(1.0 - work_share - callbacks, 0.0)
    if overhead < ctx.threshold("min_overhead_share"):
        return None
    step_s = per_iteration_s / count
    rest = "the rest is per-step overhead"
    if callbacks >= 0.05:
        rest = f"callbacks {pct(callbacks)} (a finding of their own), the rest per-step overhead"
    evidence = [
        f"{count:.0f} {what}, {fmt_s(step_s)} each; the model's own work is "
        f"{pct(work_share)} of that ({basis}), {rest}",
    ]
    batch = _batch_size(report)
    if batch is not None:
        evidence.append(f"batch size {batch}")
    variant = "keras-" + kind if kind is not None else None  # None: the call kind's
    dataset = report.call.fact("x.kind") == "tf.data.Dataset"
    if dataset and variant is not None:
        # A dataset's batches are its own (Keras ignores `batch_size` for one): the fix is
        # where the dataset is batched.
        evidence.append(
            f"the input is a `tf.data.Dataset` (`{report.call.fact('x.class')}`): its "
            "batches are the dataset's own"
        )
        variant += "-dataset"
    elif variant == "keras-train" and batch is None:
        variant = "keras-train-unknown-batch"  # a text that needs no batch size
    values = {"steps": f"{count:.0f}", "batch_size": batch or "", "larger": _larger(batch)}
    return Detection(overhead, tuple(evidence), variant=variant, values=values)


def _larger(batch: str | None) -> str:
    """A batch size to suggest: 1024, or four times the one passed when that is not
    smaller (never the size the call passes already)."""
    try:
        given = int(batch) if batch is not None else 0
    except ValueError:
        given = 0
    return str(max(1024, 4 * given)) if given >= 256 else "1024"


def _batch_size(record: RunRecord) -> str | None:
    given = dict(record.call.kwargs).get("batch_size")
    return given


def model_rebuilt_per_call(ctx: Context) -> Detection | None:
    """A new model, or a new ``tf.function`` object, on every call: everything built for
    the last one (its graphs, its compiled step) is thrown away and built again."""
    report, analysis = ctx.record, ctx.analysis
    if analysis.steady_s <= 0:
        return None
    best: tuple[float, int] | None = None
    for i in analysis.with_role("model-builder"):
        if analysis.steady_calls_per_iteration(i) >= ctx.threshold("min_calls_per_iteration"):
            share = steady_share(analysis, i)
            if best is None or share > best[0]:
                best = (share, i)
    fresh = new_functions_per_call(report)
    rebuilt = rebuilt_between_calls(report)
    tracing_share = (
        _tracing_share(report, analysis) if fresh or rebuilt or best is not None else 0.0
    )
    candidates = []
    if rebuilt is not None:
        # `tfdiag run` saw it at each call's entry: the builder ran between the calls,
        # outside them; what it costs inside them is the step traced again.
        line = (
            f"{rebuilt.line}: each call traces its step again; tracing is "
            f"{pct(tracing_share)} of steady-state time"
        )
        candidates.append((tracing_share, line, rebuilt.kind))
    if best is not None:
        fn = report.profile.functions[best[1]]
        line = (
            f"`{fn.short_name}` runs {times(analysis, best[1])} per iteration: "
            f"{pct(best[0])} of steady-state time (cumulative)"
        )
        # A new (or re-compiled) model has no graphs: its steps are traced again after it,
        # outside the builder's own time (compile() per call costs little itself).
        # Tracing under the builder is already in its share: the larger of the two is what
        # building once removes.
        if tracing_share > best[0]:
            line += (
                f"; its step functions are traced again after it: tracing is "
                f"{pct(tracing_share)} of steady-state time"
            )
        # compile() per call is how a hyper-parameter is changed between rounds: its fix
        # says how to change one on the compiled model.
        # load_weights per call keeps the model (and its graphs) but reads and assigns every
        # weight: its fix is loading once, or only when the file changed.
        variant = (
            "compile"
            if fn.name.endswith(".compile")
            else "weights"
            if fn.name.endswith("load_weights")
            else "model"
        )
        candidates.append((max(best[0], tracing_share), line, variant))
    built = _built_per_call(ctx)
    if built is not None:
        candidates.append((built.share, remedies.evidence(built), "line"))
    if fresh:
        name, count = fresh
        line = (
            f"`{name}` is traced again, with the same argument types, in {count} of "
            f"{report.timing.iterations} steady calls: a new `tf.function` object each time; "
            f"tracing is {pct(tracing_share)} of steady-state time"
        )
        variant = "function"
        optimizer = _new_optimizer(ctx)
        if optimizer is not None:
            variant, line = "new-optimizer", f"{line}; {optimizer}"
        candidates.append((tracing_share, line, variant))
    if not candidates:
        return None
    impact, text, variant = max(candidates, key=lambda c: c[0])
    if impact < ctx.threshold("min_share"):
        return None
    if variant == "line":
        return Detection(impact, (), variant="model", line=built)
    culprit = best[1] if best is not None and variant in ("model", "compile", "weights") else None
    return Detection(impact, (text,), variant=variant, culprit=culprit)


def _built_per_call(ctx: Context) -> UserLine | None:
    """The costliest of the user's lines that builds or sets something up (a constructor,
    ``adapt``, ``compile``, ``load_*``: build cost by the API's nature) on every call —
    the seeds' build class, found where it runs per iteration."""
    built = [
        u
        for u in ctx.analysis.lines
        if not u.entry
        and u.build_type
        and (u.calls_per_iteration or 0.0) >= ctx.threshold("min_calls_per_iteration")
    ]
    return max(built, key=lambda u: u.share) if built else None


def _new_optimizer(ctx: Context) -> str | None:
    """The evidence line when an optimizer is constructed on (most) calls: the new
    ``tf.function`` comes with it (a step cannot create a new optimizer's variables after
    its first trace), which is how a learning rate gets changed per epoch."""
    analysis = ctx.analysis
    for i in analysis.with_role("optimizer-builder"):
        if analysis.steady_calls_per_iteration(i) >= ctx.threshold("min_calls_per_iteration"):
            return (
                f"an optimizer is constructed {times(analysis, i)} per iteration "
                f"(`{ctx.record.profile.functions[i].short_name}`), and the step is made "
                "again for it"
            )
    return None


def _tracing_share(report: RunRecord, analysis: Analysis) -> float:
    """What tracing costs the steady state: everything under a tracer (the graph
    building's own time is only part of it), at least."""
    share = analysis.steady_share(Category.GRAPH_BUILDING)
    for i in analysis.with_role("tracer"):
        share = max(share, steady_share(analysis, i))
    return share


def new_functions_per_call(record: RunRecord) -> tuple[str, int] | None:
    """The user's Python function traced again, with the same argument types, on most
    steady calls: a ``tf.function`` object made anew on every call (the same object would
    have reused its graph). ``(name, calls it was traced in)``."""
    traced_in: dict[tuple[str, str, int, tuple[tuple[str, str], ...]], set[int]] = {}
    for e in record.traces:
        if e.call > 0 and e.file and is_user_code(e.file):
            traced_in.setdefault((e.function, e.file, e.line, e.params), set()).add(e.call)
    calls = record.timing.iterations
    for (name, _, _, _), seen in traced_in.items():
        if len(seen) >= max(2, (calls + 1) // 2):
            return name, len(seen)
    return None
