"""Detectors of where the rest of the time goes: callbacks (the user's own included), the
model's own ops, and one-time build cost."""

from __future__ import annotations

from tfdiag.advise.evidence import (
    category_of,
    effective_kind,
    pct,
    tf_figures,
    user_frames,
    with_role,
)
from tfdiag.advise.finding import CallKind, Context, Detection
from tfdiag.advise.graph_ops import graph_loop, host_op, metric_ops
from tfdiag.analysis.lines import short_qualname
from tfdiag.analysis.pipeline import Analysis
from tfdiag.records.catalog import Category
from tfdiag.records.paths import is_user_code, normalize_path
from tfdiag.records.report import RunRecord
from tfdiag.records.traces import TraceEvent
from tfdiag.records.units import fmt_s


def under_hooks(record: RunRecord, analysis: Analysis) -> float:
    """Steady seconds under Keras' callback hooks, everything they call included (the user's
    callback calling ``predict``, say): the outermost ``CallbackList.on_*`` calls only."""
    fns = analysis.steady.functions
    total = 0.0
    hooks = {i for i, _ in with_role(record, analysis, "callback-hook", "CallbackList*")}
    for i, _ in with_role(record, analysis, "callback-hook", "CallbackList.on_*"):
        outer = [e for e in fns[i].callers if not fns[e.caller].name.startswith("CallbackList.")]
        if fns[i].callers and not outer:
            continue
        share = (
            sum(e.cum_s for e in outer) / fns[i].cum_s if fns[i].callers and fns[i].cum_s else 1.0
        )
        total += fns[i].cum_s * min(share, 1.0)
    for i, _ in with_role(record, analysis, "callback-dispatch"):
        total -= fns[i].cum_s  # Keras' callback thread pool (JAX): dispatch, not callbacks
    total -= _waits_under(analysis, hooks)
    return max(total, 0.0)


def callbacks_share(record: RunRecord, analysis: Analysis) -> float:
    """The share of steady state under Keras' callback hooks, tfdiag's own hooks left out:
    what the callbacks cost (callback-overhead's, never a step's fixed cost)."""
    ours = own_hooks_s(analysis)
    return max(analysis.of_steady(under_hooks(record, analysis) - ours), 0.0)


def own_hooks_s(analysis: Analysis) -> float:
    """Steady seconds Keras' callback list spends in tfdiag's own hooks (``ProfileCallback``'s
    batch timer, its load probe): tfdiag's bookkeeping, never the user's callbacks."""
    fns = analysis.steady.functions
    total = 0.0
    for f in fns:
        if not normalize_path(f.file).startswith("tfdiag/"):
            continue
        total += sum(e.cum_s for e in f.callers if fns[e.caller].name.startswith("CallbackList."))
    return total


def _waits_under(analysis: Analysis, hooks: set[int], depth: int = 4) -> float:
    """Steady seconds Keras' own hook code waits for the step's results in (JAX: the logs
    made Python floats for a callback that overrides a batch-end hook): the device's
    compute, not the callbacks'. Edges reached from the hooks through framework frames
    only (a user's callback that waits on its own ``predict`` keeps that time)."""
    fns = analysis.steady.functions
    total = 0.0
    for r in analysis.with_role("result-wait"):
        if analysis.has_role(r, "callback-dispatch"):
            continue  # the pool's own wait: subtracted with the pool
        for e in fns[r].callers:
            k, steps = e.caller, 0
            while k not in hooks and steps < depth and not is_user_code(fns[k].file):
                if not fns[k].callers:
                    break
                k = max(fns[k].callers, key=lambda c: c.cum_s).caller
                steps += 1
            if k in hooks:
                total += e.cum_s
    return total


def callback_overhead(ctx: Context) -> Detection | None:
    """Callbacks cost time: everything Keras' callback hooks run, the user's own callbacks
    and what they call included, and the progress bar."""
    report, analysis = ctx.record, ctx.analysis
    if analysis.steady_s <= 0:
        return None
    ours = analysis.of_steady(own_hooks_s(analysis))
    own = max(analysis.steady_share(Category.CALLBACKS) - ours, 0.0)
    under = callbacks_share(report, analysis)
    share = max(own, min(under, 1.0))
    if share < ctx.threshold("min_share"):
        return None
    evidence = [
        f"callbacks & progress bar: {pct(share)} of steady-state time, everything their hooks "
        f"run included ({pct(own)} in the callbacks' own code)"
    ]
    heaviest, variant, name, part = _heaviest_callback(ctx.record, analysis)
    if heaviest:
        evidence.append(heaviest)
    values: dict[str, str] = {}
    named = ctx.threshold("min_named_part")
    if variant in ("keras", "progbar") and part < named * own and under - own < named * share:
        # The cost is the hooks' own code, not work below them (a save, a summary), and the
        # heaviest callback holds a sliver of it: naming it would blame a callback for what
        # Keras' per-batch dispatch of every hook costs (unless a callback's settings say it
        # works during the epoch: that one is named below).
        variant, name = _configured_callback(report)
        if variant is None:
            variant = "dispatch"
    if variant is None:  # nothing timed names it: a Keras callback the call was given
        variant, name = _configured_callback(report)
    if variant == "keras" and name in _KERAS_CALLBACK_VARIANTS:
        variant = _KERAS_CALLBACK_VARIANTS[name]
    if name is not None:
        values["callback"] = _with_settings(report, name) if variant != "user" else name
    nested = _keras_call_in_callback(report, analysis)
    if nested is not None:
        method, per, nested_share = nested
        variant = "user-" + method
        values["method"] = method
        evidence.append(
            f"your callback calls `model.{method}` {per:.3g}× per iteration: "
            f"{pct(nested_share)} of steady-state time, a data pipeline and callbacks per call"
        )
    owner = short_qualname(name or "").rsplit(".", 1)[0] + "."
    inside = [u for u in analysis.lines if not u.entry and u.function.startswith(owner)]
    line = max(inside, key=lambda u: u.share) if variant == "user" and inside else None
    return Detection(share, tuple(evidence), variant=variant, values=values, line=line)


def _from_user_hooks(analysis: Analysis, i: int, depth: int = 3) -> float:
    """Steady seconds of ``i`` called from a user's ``on_*`` method, through up to
    ``depth`` wrapper frames (Keras' traceback filter)."""
    total = 0.0
    for e in analysis.steady.functions[i].callers:
        caller = analysis.steady.functions[e.caller]
        if is_user_code(caller.file) and "on_" in caller.name:
            total += e.cum_s
        elif depth > 0 and category_of(analysis, e.caller) is Category.WRAPPER:
            share = e.cum_s / caller.cum_s if caller.cum_s > 0 else 0.0
            total += min(share, 1.0) * _from_user_hooks(analysis, e.caller, depth - 1)
    return total


#: Keras methods a user's callback calls that build a whole input pipeline per call.
_NESTED_METHODS = ("predict", "evaluate")


def _keras_call_in_callback(
    record: RunRecord, analysis: Analysis
) -> tuple[str, float, float] | None:
    """``model.predict``/``evaluate`` called from the user's own code under a callback hook
    (not fit's own validation): ``(method, calls per iteration, steady share)``."""
    best: tuple[str, float, float] | None = None
    for method in _NESTED_METHODS:
        for i, _ in with_role(record, analysis, "entry", method):
            user_s = _from_user_hooks(analysis, i)
            if user_s <= 0:
                continue
            per = analysis.steady_calls_per_iteration(i)
            share = min(analysis.of_steady(user_s), 1.0)
            if best is None or share > best[2]:
                best = (method, per, share)
    return best


#: Keras callbacks whose fix names their own frequency arguments.
_KERAS_CALLBACK_VARIANTS = {"ModelCheckpoint": "checkpoint", "TensorBoard": "tensorboard"}


def _with_settings(record: RunRecord, name: str) -> str:
    """``ModelCheckpoint(save_freq=2)``: the class with the frequency settings the call's
    facts recorded for it (the class alone when there are none)."""
    prefix = f"callback.{name}."
    settings = [
        f"{key[len(prefix) :]}={_literal(value)}"
        for key, value in record.call.facts
        if key.startswith(prefix)
    ]
    return f"{name}({', '.join(settings)})" if settings else name


def _literal(value: str) -> str:
    """A recorded setting as the user writes it: ``2``, ``'epoch'``."""
    return value if value.lstrip("-").isdigit() or value in ("True", "False") else repr(value)


def _configured_callback(record: RunRecord) -> tuple[str | None, str | None]:
    """A Keras callback given to the call whose settings make it work during the epoch
    (``ModelCheckpoint(save_freq=<batches>)``, ``TensorBoard(update_freq=<batches>)``)."""
    for name, variant in _KERAS_CALLBACK_VARIANTS.items():
        for setting in ("save_freq", "update_freq", "profile_batch"):
            value = record.call.fact(f"callback.{name}.{setting}")
            if value is not None and value.isdigit() and int(value) > 0:
                return variant, name
    return None, None


def _heaviest_callback(
    record: RunRecord, analysis: Analysis
) -> tuple[str, str | None, str | None, float]:
    """Which callback's hooks cost the most: the user's own (by class and hook), the
    progress bar, or a Keras one (TensorBoard, ...): ``(evidence, variant, name, share)``."""
    seconds: dict[tuple[str, str], float] = {}
    for i, fn in enumerate(analysis.steady.functions):
        cb = analysis.own[i].get(Category.CALLBACKS, 0.0) * fn.self_s
        if cb <= 0:
            continue
        owner = _owner(record, analysis, i)
        if owner is not None:
            seconds[owner] = seconds.get(owner, 0.0) + cb
    if not seconds:
        return "", None, None, 0.0
    (name, kind), s = max(seconds.items(), key=lambda kv: kv[1])
    share = analysis.of_steady(s)
    if kind == "user":
        return (
            f"your callback `{name}` takes {pct(share)} of steady-state time",
            "user",
            name,
            share,
        )
    if kind == "progbar":
        return f"the progress bar takes {pct(share)} of steady-state time", "progbar", None, share
    shown = _with_settings(record, name)
    return f"`{shown}` takes {pct(share)} of steady-state time", "keras", name, share


def _owner(record: RunRecord, analysis: Analysis, i: int) -> tuple[str, str] | None:
    """The callback a callback-time function belongs to: walk up the heaviest callers to
    the first user frame, progress bar or Keras callback module."""
    fns = analysis.steady.functions
    seen = set()
    while i not in seen:
        seen.add(i)
        fn = fns[i]
        path = normalize_path(fn.file)
        if is_user_code(fn.file) and "on_" in fn.name:
            return fn.name, "user"
        if "progbar" in path or "Progbar" in fn.name:
            return "progress bar", "progbar"
        if analysis.has_role(i, "callback") and not (
            "CallbackList" in fn.name or analysis.has_role(i, "callback-hook")
        ):
            return fn.name.split(".", 1)[0], "keras"
        if not fn.callers:
            return None
        i = max(fn.callers, key=lambda e: e.cum_s).caller
    return None


def compute_bound(ctx: Context) -> Detection | None:
    """The model's own ops take most of the time. Only the TF profiler can say so: without
    it, time inside a graph call may be waiting (for input, for Python ops, for another
    replica) as much as computing.

    The share is of the traced step's wall time, or of the median iteration no tracer slowed
    when that is shorter: the profiler's own cost (and a traced step slowed by a busy
    machine) lengthens the wall around the ops, and one such step must not decide it."""
    figures = tf_figures(ctx.record)
    if figures is None or figures.wall_s <= 0:
        return None
    wall, basis = figures.wall_s, "per traced iteration"
    median = ctx.record.timing.median_s
    if median and 0 < median < wall:
        wall, basis = median, "per unprofiled iteration (median)"
    share = min(figures.compute_s / wall, 1.0)
    input_wait = min(figures.input_wait_s / wall, 1.0)
    if input_wait >= ctx.threshold("max_input_wait"):
        return None
    # Inside the graph, one cause may be most of it: an op that does no math, a loop.
    tf = ctx.record.probes.tf_profile if ctx.record.probes is not None else None
    cost = (
        (host_op(ctx, tf, wall) or graph_loop(ctx, tf) or metric_ops(ctx, tf))
        if tf is not None
        else None
    )
    if share < ctx.threshold("min_share") and cost is None:
        return None
    threads = "; op time is summed over threads" if figures.compute_s > wall else ""
    evidence = (
        f"TF profiler: the model's ops take {figures.compute_s * 1e3:.1f} ms of "
        f"{wall * 1e3:.1f} ms {basis} ({pct(share)}{threads}); waiting for input "
        f"{pct(input_wait)}; tf.data ops and Python ops not counted",
    )
    # A custom loop has no compile(): XLA is asked for on its own tf.function.
    keras = effective_kind(ctx) in (CallKind.PREDICT, CallKind.FIT, CallKind.EVALUATE)
    keras = keras or effective_kind(ctx) is CallKind.ON_BATCH
    jit = (
        "`jit_compile=True` in `compile()`"
        if keras
        else "`@tf.function(jit_compile=True)` on your step"
    )
    if cost is not None:
        # Its fix removes its share: that is the impact.
        values = {"jit": jit, **cost.values}
        return Detection(cost.share, evidence + cost.evidence, variant=cost.variant, values=values)
    return Detection(share, evidence, values={"jit": jit})


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
    evidence.append(f"{basis}: {build_s:.3f} s, {pct(build_share)} of profiled time")
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
    big = _largest_user_graph(report)
    if (
        big is not None
        and big.ops >= ctx.threshold("large_graph_ops")
        and big.repeats >= ctx.threshold("unrolled_repeats")
    ):
        where = f"{big.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{big.line}"
        evidence.append(
            f"`{big.function}` ({where}) was traced into a graph of {big.ops} ops, one op "
            f"repeated {big.repeats}× in one scope: a Python loop (`for … in range(…)`) in a "
            "`tf.function` is unrolled, its body's ops copied into the graph once per step"
        )
        values = {"function": big.function, "ops": str(big.ops)}
        return Detection(build_share, tuple(evidence), variant="large-graph", values=values)
    return Detection(build_share, tuple(evidence))


def _largest_user_graph(record: RunRecord) -> TraceEvent | None:
    """The user's own traced function whose graph holds the most ops."""
    own = [e for e in record.traces if e.file and is_user_code(e.file) and e.ops > 0]
    return max(own, key=lambda e: e.ops) if own else None


#: The id of the finding that says where the time went when no other finding applies.
NO_FINDING = "no-known-cause"


def where_the_time_went(ctx: Context) -> Detection | None:
    """Where the steady state goes, for a report no other finding applies to: the
    categories' shares, the TF profiler's op and input-wait shares, the eager ops, the
    heaviest function of the user's own — and why none of that is a known slow pattern.
    (:func:`tfdiag.advise.advise` drops it when any other finding is reported.)"""
    report, analysis = ctx.record, ctx.analysis
    if analysis.steady_s <= 0:
        return None
    shares = sorted(
        ((analysis.steady_share(c), c) for c in Category if c is not Category.WRAPPER),
        key=lambda t: -t[0],
    )
    per = analysis.steady_s / analysis.iterations
    spread = ", ".join(f"{c.label} {pct(x)}" for x, c in shares[:4] if x >= 0.01)
    evidence = [f"the steady state, {fmt_s(per)} per iteration under cProfile, goes to: {spread}"]
    figures = tf_figures(report)
    if figures is not None and figures.wall_s > 0:
        evidence.append(
            f"TF profiler: the model's ops are {pct(figures.compute_share)} of the wall, "
            f"waiting for input {pct(figures.input_wait_share)}: neither reaches a finding's "
            "threshold"
        )
    for i, _ in with_role(report, analysis, "eager-op"):
        evidence.append(
            f"{analysis.steady_calls_per_iteration(i):.0f} eager op dispatches per iteration, "
            f"{pct(analysis.of_steady(analysis.steady.functions[i].self_s))} of the time"
        )
        break
    own = [
        (analysis.steady.functions[i].cum_s, fn.short_name)
        for i, fn in user_frames(report)
        if analysis.steady.functions[i].calls > 0
        and analysis.of_steady(analysis.steady.functions[i].cum_s) < 0.95  # not the call itself
    ]
    if own:
        cum, name = max(own)
        evidence.append(
            f"the heaviest function of your own below the call: `{name}`, "
            f"{pct(min(analysis.of_steady(cum), 1.0))} (cumulative)"
        )
    return Detection(0.0, tuple(evidence))
