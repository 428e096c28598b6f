"""Keras 3 on JAX: the fixed cost of each ``predict``/``fit``/``evaluate`` call around its
jitted step.

On JAX every such call builds a data adapter and an epoch iterator, sets up its callbacks,
starts a thread pool for the batch-end callbacks, gathers the model's variables into the
step's state and writes them back; the step itself is one call of a jitted XLA program.
Called per small batch, the set-up is most of the time (seed 003 on Keras 3.15 / jax 0.10,
CPU: ``predict`` 1.2–2.7 ms, ``predict_on_batch`` 0.11–0.13 ms, a jitted ``stateless_call``
0.03–0.04 ms). Reported as ``per-call-input-pipeline``, the same mechanism as on TensorFlow,
with the fix in JAX's terms.
"""

from __future__ import annotations

from tfdiag.advise.evidence import category_of, keras_call, keras_steps, pct, with_role
from tfdiag.advise.finding import CallKind, Context, Detection
from tfdiag.analysis.pipeline import Analysis
from tfdiag.analysis.xspace import layer_of
from tfdiag.records.catalog import Category
from tfdiag.records.jax_profile import JaxProfile, XlaOp
from tfdiag.records.paths import is_user_code
from tfdiag.records.report import RunRecord

_KINDS = (CallKind.PREDICT, CallKind.FIT, CallKind.EVALUATE)


def compiled_s(record: RunRecord, analysis: Analysis) -> float:
    """Steady seconds of the jitted program as Python sees it: the call of Keras' jitted step
    (its own time: the compiled program is called from it) and the waits for its results
    (JAX dispatches asynchronously, so the compute lands in the first wait on an output)."""
    fns = analysis.steady.functions
    step = sum(fns[i].self_s for i, _ in with_role(record, analysis, "step", "*iterator_step"))
    waits = sum(fns[i].cum_s for i, _ in with_role(record, analysis, "result-wait"))
    return step + waits


def _traced_compute(ctx: Context, trace: JaxProfile) -> Detection | None:
    """From the JAX profiler's trace: the time XLA ops ran (their union over threads) of the
    traced iteration's wall, or of the median unprofiled one when that is shorter (the
    trace's own cost lengthens the wall, as on TensorFlow); the heaviest ops named with the
    Keras layer of their jaxpr path."""
    wall, basis = trace.wall_s / trace.steps, "per traced iteration"
    busy = trace.xla_busy_s / trace.steps
    median = ctx.record.timing.median_s
    if median and busy <= median < wall:
        wall, basis = median, "per unprofiled iteration (median)"
    if wall <= 0:
        return None
    share = min(busy / wall, 1.0)
    if share < ctx.threshold("min_share"):
        return None
    evidence = [
        f"JAX profiler: XLA ran the model's ops {busy * 1e3:.3g} ms of {wall * 1e3:.3g} ms "
        f"{basis} ({pct(share)}); Python around them (Keras, dispatch, waits) {pct(1 - share)}",
    ]
    heavy = [o for o in trace.ops if trace.xla_op_s > 0 and o.self_s / trace.xla_op_s >= 0.05]
    if heavy:
        named = ", ".join(
            f"{_layers(o)} {o.category or 'op'} ({o.name}) {pct(o.self_s / trace.xla_op_s)}"
            for o in heavy[:3]
        )
        evidence.append(f"heaviest XLA ops (share of XLA op time): {named}")
    return Detection(share, tuple(evidence), values={"jit": "`jit_compile=True` (the default)"})


def _layers(op: XlaOp) -> str:
    """The Keras layer(s) an XLA op computes: ``conv2d``, or a fused chain
    ``conv2d`` … ``conv2d_5`` (6 layers)."""
    if len(op.layers) > 1:
        return f"`{op.layers[0]}` … `{op.layers[-1]}` ({len(op.layers)} layers)"
    return f"`{layer_of(op.op_name) or op.name}`"


def work_share(ctx: Context) -> tuple[float, str]:
    """The share of the steady state the model's compiled work takes on JAX, and what it is
    read from: the JAX profiler's trace (XLA busy of the wall, as :func:`compute_bound`)
    when the observe pass traced, else cProfile's jitted-program call and its waits. A
    TensorFlow counter (``TFE_Py_Execute``) is zero on JAX: never the basis here."""
    trace = ctx.record.probes.jax_profile if ctx.record.probes is not None else None
    if trace is not None and trace.steps and trace.wall_s > 0:
        wall = trace.wall_s / trace.steps
        busy = trace.xla_busy_s / trace.steps
        median = ctx.record.timing.median_s
        if median and busy <= median < wall:
            wall = median
        return min(busy / wall, 1.0), "the JAX profiler's XLA time"
    share = ctx.analysis.of_steady(compiled_s(ctx.record, ctx.analysis))
    return min(share, 1.0), "the jitted program's calls and waits"


def compute_bound(ctx: Context) -> Detection | None:
    """On JAX: the jitted program takes ≥ ``min_share`` of the steady state — from the JAX
    profiler's trace when the observe pass traced a block, else (no trace) from cProfile: the
    jitted program's call and the waits for its results."""
    if ctx.backend != "jax" or ctx.analysis.steady_s <= 0:
        return None
    trace = ctx.record.probes.jax_profile if ctx.record.probes is not None else None
    if trace is not None:
        return _traced_compute(ctx, trace)
    share = min(ctx.analysis.of_steady(compiled_s(ctx.record, ctx.analysis)), 1.0)
    if share < ctx.threshold("min_share"):
        return None
    evidence = (
        f"the jitted XLA program takes {pct(share)} of steady-state time: its call from Keras' "
        "step and Python's waits for its results (JAX runs it asynchronously); Keras' own "
        f"Python around it {pct(1 - share)}",
    )
    return Detection(share, evidence, values={"jit": "`jit_compile=True` (the default)"})


def per_call_overhead(ctx: Context) -> Detection | None:
    """A Keras ``predict``/``fit``/``evaluate`` on JAX of few steps per call whose time
    outside its jitted step is ≥ ``min_jax_share`` of the steady state."""
    if ctx.backend != "jax":
        return None
    record, analysis = ctx.record, ctx.analysis
    call = keras_call(record, analysis)
    if call is None or call.kind not in _KINDS or analysis.steady_s <= 0:
        return None
    steps = keras_steps(record, analysis)
    per_call = steps.per_iteration / max(steps.calls, 1e-9) if steps is not None else 1.0
    if per_call > ctx.threshold("max_steps_per_call"):
        return None  # many steps per call: the set-up is paid once for them
    fns = analysis.steady.functions
    entry_s = sum(
        fns[i].cum_s for i, _ in with_role(record, analysis, "entry", f"JAXTrainer.{call.method}")
    )
    if entry_s <= 0:
        return None
    step_s = compiled_s(record, analysis)
    # the whole step (its next batch, its Python when it runs eagerly) is not set-up
    inside_s = step_s + sum(
        fns[i].cum_s - fns[i].self_s
        for i, _ in with_role(record, analysis, "step", "*iterator_step")
    )
    impact = min(analysis.of_steady(max(entry_s - inside_s, 0.0)), 1.0)
    if impact < ctx.threshold("min_jax_share"):
        return None
    pool_s = sum(
        fns[i].cum_s
        for i, _ in with_role(record, analysis, "callback-dispatch")
        if not analysis.has_role(i, "result-wait")
    )
    evidence = [
        f"`{call.method}` on JAX: {pct(impact)} of steady-state time is Keras' set-up around "
        f"its jitted step, which takes {pct(analysis.of_steady(step_s))} (its run and the "
        "wait for its results)",
        f"per call: a data adapter and epoch iterator "
        f"({pct(analysis.steady_share(Category.INPUT_PIPELINE))} non-overlapping), the "
        f"callbacks' thread pool started and joined ({pct(analysis.of_steady(pool_s))}), "
        "the model's variables gathered into the step's state and written back",
    ]
    if call.looped:
        evidence.insert(
            0, f"`{call.method}` is called {call.per_iteration:.3g}× per iteration of your code"
        )
    if steps is not None:
        evidence.append(f"{per_call:.3g} step(s) per `{call.method}` call")
    trace = record.probes.jax_profile if record.probes is not None else None
    if trace is not None and trace.wall_s > 0:
        xla = min(trace.xla_busy_s / trace.wall_s, 1.0)
        evidence.append(
            f"JAX profiler: XLA ran {pct(xla)} of the traced calls' wall time, Python and "
            f"Keras around it {pct(1 - xla)}"
        )
    variant = (
        "on-batch-train"
        if call.method == "train_on_batch"
        else "on-batch-predict"
        if call.method == "predict_on_batch"
        else None
    )
    return Detection(impact, tuple(evidence), variant=variant, values={"method": call.method})


def _primitives(ctx: Context, python_s: float) -> tuple[float, float, float] | None:
    """JAX primitives dispatched one at a time under ``python_s`` of steady Python:
    ``(per iteration, their own run in steady seconds, the removable share)`` — their own run
    is their self time less ``dispatch_s`` each, the removable share the rest of
    ``python_s`` — or None below ``min_ops_per_iteration`` or a removable ``min_share``."""
    analysis = ctx.analysis
    fns = analysis.steady.functions
    prims = list(with_role(ctx.record, analysis, "primitive-dispatch"))
    ops = sum(analysis.steady_calls_per_iteration(i) for i, _ in prims)
    if ops < ctx.threshold("min_ops_per_iteration"):
        return None
    calls = sum(fns[i].primitive_calls for i, _ in prims)
    kernel_s = max(sum(fns[i].self_s for i, _ in prims) - calls * ctx.threshold("dispatch_s"), 0)
    removable = min(analysis.of_steady(max(python_s - kernel_s, 0.0)), 1.0)
    if removable < ctx.threshold("min_share"):
        return None
    return ops, kernel_s, removable


def eager_step(ctx: Context) -> Detection | None:
    """Keras' step run as Python on JAX, op by op (``run_eagerly=True`` or
    ``jit_compile=False``): its step body runs on the steady calls, where a jitted step
    is only traced once, on the first. The removable share is the step's time less its ops'
    own work (their compiled primitives' time, less ``dispatch_s`` each)."""
    if ctx.backend != "jax" or ctx.analysis.steady_s <= 0:
        return None
    record, analysis = ctx.record, ctx.analysis
    steps = list(with_role(record, analysis, "eager-step"))
    steps = [(i, f) for i, f in steps if analysis.steady_calls_per_iteration(i) >= 0.5]
    if not steps:
        return None
    step_s = sum(f.cum_s for _, f in steps)
    found = _primitives(ctx, step_s)
    if found is None:
        return None
    ops, kernel_s, removable = found
    per_step = sum(analysis.steady_calls_per_iteration(i) for i, _ in steps)
    evidence = [
        f"Keras' step (`{steps[0][1].short_name}`) runs as Python {per_step:.3g}× per "
        f"iteration, {ops:.0f} JAX ops dispatched one at a time: a jitted step runs Python "
        "only once, when it is traced",
        f"the ops' own time is {pct(analysis.of_steady(kernel_s))} of steady-state time; the "
        f"Python around them (layers, autodiff, the optimizer), {pct(removable)}, is what "
        "jax.jit removes",
    ]
    facts = record.call.fact("run_eagerly"), record.call.fact("jit_compile")
    # Keras jits its step on JAX exactly when `not run_eagerly and jit_compile`
    # (keras/src/backend/jax/trainer.py): a step run as Python is one of the two settings,
    # named when the record shows which (the profiled call was the model's own).
    variant = "run-eagerly" if facts[0] == "True" else "jit-off" if facts[1] == "False" else None
    if variant is not None:
        setting = "run_eagerly=True" if variant == "run-eagerly" else "jit_compile=False"
        evidence.insert(0, f"the model is compiled with `{setting}`")
    return Detection(removable, tuple(evidence), variant=variant or "eager-step")


def eager_model_call(ctx: Context) -> Detection | None:
    """On JAX, the user's code calls a Keras model or layer directly (``model(x)``, an RL
    agent's actor per environment step) outside any jitted function: each call runs the
    layers' Python and dispatches their ops one by one. Found by volume: the user's calls
    into ``layer-call`` functions, ≥ ``min_ops_per_iteration`` primitives dispatched per
    iteration under them, less the primitives' own run (``dispatch_s`` each)."""
    if ctx.backend != "jax" or ctx.analysis.steady_s <= 0:
        return None
    analysis = ctx.analysis
    fns = analysis.steady.functions
    layers = set(analysis.with_role("layer-call"))
    calls_s, caller, top = 0.0, -1, 0.0

    def outermost(u: int) -> bool:
        # a custom layer's `call` calling its sublayers runs inside the model's call
        return is_user_code(fns[u].file) and not any(c.caller in layers for c in fns[u].callers)

    def count(u: int, s: float) -> None:
        nonlocal calls_s, caller, top
        calls_s += s
        if s > top:
            caller, top = u, s

    wrappers: set[int] = set()
    for i in sorted(layers):
        for e in fns[i].callers:
            k = e.caller
            if outermost(k):
                count(k, e.cum_s)
            elif (
                category_of(analysis, k) is Category.WRAPPER
                and fns[k].cum_s > 0
                and k not in wrappers
            ):
                wrappers.add(k)
                # Keras' traceback filter is one row for every function it wraps: the
                # user's calls through it are taken to be of the layer it wraps most
                # (a layer calls its Operation through it too: the largest, not the sum)
                wrapped = max(
                    (c.cum_s for j in layers for c in fns[j].callers if c.caller == k),
                    default=0.0,
                )
                frac = min(wrapped / fns[k].cum_s, 1.0)
                for w in fns[k].callers:
                    if outermost(w.caller):
                        count(w.caller, w.cum_s * frac)
    if caller < 0:
        return None
    found = _primitives(ctx, calls_s)
    if found is None:
        return None
    ops, _, removable = found
    who = fns[caller]
    evidence = (
        f"your `{who.short_name}` calls a Keras model or layer directly, outside `jax.jit`: "
        f"{ops:.0f} JAX ops dispatched one at a time per iteration",
        f"the layers' Python around those ops is {pct(removable)} of steady-state time, what "
        "one jitted forward pass (compiled once) removes",
    )
    return Detection(removable, evidence, variant="model-call", values={"entry": who.short_name})


def eager_ops(ctx: Context) -> Detection | None:
    """On JAX, the user's own code runs JAX ops one at a time from Python (``keras.ops`` or
    ``jnp`` on arrays, outside any jitted function, a loop over rows): each op is a
    compiled primitive dispatched from Python. Found by volume, as the other two: ≥
    ``min_ops_per_iteration`` primitives per iteration, their own run less ``dispatch_s``
    each; what the Python around them costs is what batching the work (or ``jax.jit``)
    removes. After :func:`eager_step` and :func:`eager_model_call`, whose primitives are
    a step's or a model's."""
    if ctx.backend != "jax" or ctx.analysis.steady_s <= 0:
        return None
    if keras_call(ctx.record, ctx.analysis) is not None:
        return None  # a Keras loop's primitives are its set-up's (per-call-input-pipeline)
    found = _primitives(ctx, ctx.analysis.steady_s)
    if found is None:
        return None
    ops, kernel_s, removable = found
    evidence = (
        f"{ops:.0f} JAX ops dispatched one at a time per iteration (`apply_primitive`), "
        "outside any jitted function: each a compiled primitive called from Python",
        f"the ops' own time is {pct(ctx.analysis.of_steady(kernel_s))} of steady-state time; "
        f"the Python around them, {pct(removable)}, is what one op on the whole array (or "
        "jax.jit) removes",
    )
    return Detection(removable, evidence, variant="jax-ops")
