"""Training variants: the call as written and each fix run on its own clone of the model
(same weights, compiled like it, a fresh optimizer), checked by their loss on the same data
after the same amount of training. The user's model, optimizer and data are never trained on
or changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tfdiag.measure.methods import _gradient_step
from tfdiag.measure.subject import Subject, num_samples
from tfdiag.measure.verify.call import Call
from tfdiag.measure.verify.variant import (
    EVERY_BACKEND,
    JAX_ONLY,
    TRAINING,
    Built,
    NotApplicable,
    Variant,
)

#: One ``fit`` over this many times the epochs stands for that many calls.
FITS_IN_ONE = 4
#: The ``steps_per_execution`` the variant compiles its clone with.
STEPS_PER_EXECUTION = 32
_TRAIN = ("fit", "train_on_batch")


def trainable(call: Call) -> str | None:
    """Why the call cannot be re-run on clones, or None."""
    if call.method not in _TRAIN:
        return f"the call is {call.method or 'not a Keras method'}, not fit or train_on_batch"
    if call.named is None:
        return "the call passes positional arguments verification does not name"
    if call.arg("callbacks"):
        return "the call passes callbacks, which a re-run on a clone would call again"
    if not call.arrays and call.x_kind != "tf.data.Dataset":
        return f"x is {call.x_kind}: only arrays and tf.data datasets are re-run"
    if not call.facts or call.facts.get("run_eagerly") is None:
        return "the model's compile settings were not recorded"
    return None


def loss_of(call: Call, model: Any) -> float:
    """The model's loss on the call's own data (``evaluate``, untimed)."""
    if call.arrays:
        logs = model.evaluate(
            call.x, call.y, batch_size=call.batch_size, verbose=0, return_dict=True
        )
    elif call.x_kind == "tf.data.Dataset":
        logs = model.evaluate(call.x, verbose=0, return_dict=True)
    else:
        raise NotApplicable(f"no loss to check on {call.x_kind}")
    return float(logs["loss"])


def _on_clone(call: Call, clone: Any, named: dict[str, Any], fix: str, units: int = 1) -> Built:
    method = getattr(clone, call.method)

    def run() -> Any:
        return method(**named)

    return Built(run=run, fix=fix, units=units, loss=lambda: loss_of(call, clone))


def baseline_training(call: Call) -> Built:
    """The call as written, on a clone compiled like the model."""
    return _on_clone(call, call.clone(), dict(call.named or {}), call.code())


def _fit_applies(call: Call) -> str | None:
    why = trainable(call)
    if why is None and call.method != "fit":
        why = "the call is train_on_batch, not fit"
    return why


def _more_epochs_applies(call: Call) -> str | None:
    why = _fit_applies(call)
    if why is None and call.arg("initial_epoch"):
        why = "the call passes initial_epoch=: more epochs would not multiply its work"
    return why


def _more_epochs(call: Call) -> Built:
    epochs = call.arg("epochs", 1)
    if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
        raise NotApplicable(f"epochs={epochs!r} is not a count")
    named = {**(call.named or {}), "epochs": epochs * FITS_IN_ONE}
    fix = call.code(epochs=epochs * FITS_IN_ONE) + f"  # one fit instead of {FITS_IN_ONE}"
    return _on_clone(call, call.clone(), named, fix, units=FITS_IN_ONE)


def _step_applies(call: Call) -> str | None:
    why = trainable(call)
    if why is None and not call.arrays:
        why = "x is not an array: the step's batches are slices of x"
    if why is None and call.y is None:
        why = "no targets y"
    return why


_STEP_FIX = (
    "@tf.function\n"
    "def train_step(xb, yb):\n"
    "    with tf.GradientTape() as tape:\n"
    "        loss = model.compute_loss(x=xb, y=yb, y_pred=model(xb, training=True))\n"
    "    grads = tape.gradient(loss, model.trainable_variables)\n"
    "    model.optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
    "    return loss\n"
)


def _train_step(call: Call) -> Built:
    clone = call.clone(run_eagerly=False)
    if call.method == "train_on_batch":
        subject = Subject(clone, call.x, call.y, batch_size=num_samples(call.x), flavour="")
        loop = "train_step(x, y)"
    else:
        subject = Subject(clone, call.x, call.y, batch_size=call.batch_size, flavour="")
        loop = f"for xb, yb in batches of {call.batch_size}:  # × epochs\n    train_step(xb, yb)"
    subject.__dict__["tf"] = call.tf
    epoch: Callable[[], Any] = _gradient_step(graph=True)(subject, clone)
    epochs = call.arg("epochs", 1) if call.method == "fit" else 1
    epochs = epochs if isinstance(epochs, int) and epochs >= 1 else 1

    def run() -> Any:
        for _ in range(epochs):
            out = epoch()
        return out

    return Built(run=run, fix=_STEP_FIX + loop, loss=lambda: loss_of(call, clone))


_JIT_STEP_FIX = (
    "def loss_and_updates(tv, ntv, x, y):\n"
    "    y_pred, ntv = model.stateless_call(tv, ntv, x, training=True)\n"
    "    loss, (_, ntv, _) = model.stateless_compute_loss(tv, ntv, mv, x=x, y=y, y_pred=y_pred)\n"
    "    return loss, ntv\n"
    "@jax.jit  # once\n"
    "def train_step(state, x, y):\n"
    "    tv, ntv, ov = state\n"
    "    (loss, ntv), grads = jax.value_and_grad(loss_and_updates, has_aux=True)(tv, ntv, x, y)\n"
    "    tv, ov = model.optimizer.stateless_apply(ov, grads, tv)\n"
    "    return loss, (tv, ntv, ov)\n"
)


def _jit_step_applies(call: Call) -> str | None:
    why = _step_applies(call)
    if why is None and call.flavour != "keras3":
        why = f"the model is {call.flavour}, not Keras 3"
    return why


def _jit_train_step(call: Call) -> Built:
    from tfdiag.measure.methods_jax import jit_train_step
    from tfdiag.measure.subject import take

    clone = call.clone(run_eagerly=False)
    loss_of(call, clone)  # builds the clone's compiled loss and metrics, as fit would
    step, held, write_back = jit_train_step(clone)
    if call.method == "train_on_batch":
        batches, loop = [(call.x, call.y)], "loss, state = train_step(state, x, y)"
        epochs = 1
    else:
        b, n = call.batch_size, num_samples(call.x)
        batches = [(take(call.x, i, i + b), take(call.y, i, i + b)) for i in range(0, n, b)]
        loop = f"for xb, yb in batches of {b}:  # × epochs\n"
        loop += "    loss, state = train_step(state, xb, yb)"
        epochs = call.arg("epochs", 1)
        epochs = epochs if isinstance(epochs, int) and epochs >= 1 else 1

    def run() -> Any:
        loss = None
        for _ in range(epochs):
            for xb, yb in batches:
                loss, held[0] = step(held[0], xb, yb)
        return float(loss) if loss is not None else None  # waits, as fit does

    def loss() -> float:
        write_back()
        return loss_of(call, clone)

    return Built(run=run, fix=_JIT_STEP_FIX + loop, loss=loss)


def _steps_applies(call: Call) -> str | None:
    why = _fit_applies(call)
    if why is None and call.facts.get("steps_per_execution") not in ("1", None):
        why = f"steps_per_execution is already {call.facts.get('steps_per_execution')}"
    return why


def _steps_per_execution(call: Call) -> Built:
    clone = call.clone(steps_per_execution=STEPS_PER_EXECUTION)
    fix = f"model.compile(..., steps_per_execution={STEPS_PER_EXECUTION})  # on a clone\n"
    return _on_clone(call, clone, dict(call.named or {}), fix + call.code())


def _compiled_applies(call: Call) -> str | None:
    why = trainable(call)
    if why is None and call.facts.get("run_eagerly") != "True":
        why = "the model is not compiled with run_eagerly=True"
    return why


def _compiled_fit(call: Call) -> Built:
    clone = call.clone(run_eagerly=False)
    fix = "model.compile(..., run_eagerly=False)  # on a clone\n" + call.code()
    return _on_clone(call, clone, dict(call.named or {}), fix)


def _cast_applies(call: Call) -> str | None:
    why = trainable(call)
    if why is None and (not call.arrays or call.x_dtype != "float64"):
        why = f"x is {call.x_dtype}, not a float64 array"
    return why


def _cast_once(call: Call) -> Built:
    named = {**(call.named or {}), "x": call.x.astype("float32")}
    fix = "x = x.astype('float32')  # once, before the calls\n" + call.code()
    return _on_clone(call, call.clone(), named, fix)


#: What the train step does as the call did: the same batches of x and y for the same
#: epochs (in order: ``shuffle`` changes the order, not the work), ``verbose``, and
#: ``train_on_batch``'s ``reset_metrics`` and ``return_dict`` (what it reports, not what it
#: trains). Anything else — ``validation_data``, ``validation_split``, ``sample_weight``,
#: ``class_weight``, ``steps_per_epoch``, ``initial_epoch`` — it would drop.
_STEP_REPRODUCES = frozenset(
    {"x", "y", "batch_size", "epochs", "verbose", "shuffle", "reset_metrics", "return_dict"}
)


TRAINING_VARIANTS = {
    "more epochs": Variant(
        "one fit over more epochs",
        TRAINING,
        _more_epochs_applies,
        _more_epochs,
        backends=EVERY_BACKEND,
    ),
    "train step": Variant(
        "tf.function train step",
        TRAINING,
        _step_applies,
        _train_step,
        reproduces=_STEP_REPRODUCES,
        twin="jit train step",
    ),
    "jit train step": Variant(
        "jit train step",
        TRAINING,
        _jit_step_applies,
        _jit_train_step,
        reproduces=_STEP_REPRODUCES,
        backends=JAX_ONLY,
        twin="tf.function train step",
    ),
    "steps_per_execution": Variant(
        f"steps_per_execution={STEPS_PER_EXECUTION}",
        TRAINING,
        _steps_applies,
        _steps_per_execution,
        backends=EVERY_BACKEND,
    ),
    "compiled fit": Variant(
        "compiled as a graph", TRAINING, _compiled_applies, _compiled_fit, backends=EVERY_BACKEND
    ),
    "cast once": Variant(
        "inputs cast once", TRAINING, _cast_applies, _cast_once, backends=EVERY_BACKEND
    ),
}
