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

from tfdiag.advise.evidence import functions, keras_call, keras_steps, pct
from tfdiag.advise.finding import CallKind, Context, Detection
from tfdiag.records.catalog import Category
from tfdiag.records.catalog.jax import CALLBACK_POOL

_TRAINER = "keras/src/backend/jax/trainer.py"
_STEP = "*_make_function.<locals>.iterator_step"
_KINDS = (CallKind.PREDICT, CallKind.FIT, CallKind.EVALUATE)


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
    entry_s = sum(fns[i].cum_s for i, _ in functions(record, _TRAINER, f"JAXTrainer.{call.method}"))
    step_s = max((fns[i].cum_s for i, _ in functions(record, _TRAINER, _STEP)), default=0.0)
    if entry_s <= 0:
        return None
    impact = min(analysis.of_steady(max(entry_s - step_s, 0.0)), 1.0)
    if impact < ctx.threshold("min_jax_share"):
        return None
    pool_s = sum(
        fns[i].cum_s
        for name in CALLBACK_POOL
        for i, _ in functions(record, "keras/src/callbacks/callback_list.py", name)
    )
    evidence = [
        f"`{call.method}` on JAX: {pct(impact)} of steady-state time is Keras' set-up around "
        f"its jitted step, which takes {pct(analysis.of_steady(step_s))}",
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
    return Detection(impact, tuple(evidence), values={"method": call.method})
