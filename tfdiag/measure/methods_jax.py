"""The execution methods :func:`tfdiag.compare` measures on Keras 3's JAX backend.

The inference methods a Keras-on-JAX user can call, timed like the TensorFlow ones
(:mod:`tfdiag.measure.methods`): ``predict``, ``predict_on_batch``, ``model(x)`` (eager on
JAX: the layers op by op) and a ``jax.jit`` of ``model.stateless_call`` built once over the
model's state. None imports TensorFlow or touches the model's weights (the state is read at
each call: ``predict`` donates its buffers).

The training methods each train their own copy (``clone_model`` + ``set_weights``, compiled
like the model with a fresh optimizer, copied without loading TensorFlow:
:func:`tfdiag.measure.subject.serializing_without_tensorflow`): ``fit`` over all batches,
``fit`` called per batch, ``train_on_batch`` per batch, and a train step jitted once over
``model.stateless_call`` + ``model.stateless_compute_loss`` differentiated with
``jax.value_and_grad`` and applied with ``optimizer.stateless_apply`` (Keras' guide "Writing a
training loop from scratch in JAX"), its state held outside the copy and written back to it
only to take the loss after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tfdiag.measure.methods import (
    INFERENCE,
    TRAINING,
    Method,
    Prepared,
    _direct_call,
    _fit,
    _predict,
    _predict_on_batch,
    _train_on_batch,
    _trainer,
)
from tfdiag.measure.subject import Subject, to_numpy


@contextmanager
def weights_reattached(model: Any) -> Iterator[None]:
    """Within the block, a ``predict`` of ``model`` that raises leaves its weights on it.

    Keras' JAX ``predict`` takes the variables' values off the model before its first batch
    and puts them back after the last; a batch that raises leaves them off, and every later
    call of the model fails (``'NoneType' object is not callable``). A copy taken before the
    block is put back on each variable left without a value."""
    import numpy as np

    saved = [(v, np.array(v.value)) for v in model.variables]
    try:
        yield
    finally:
        for v, value in saved:
            if getattr(v, "_value", True) is None:  # Keras' JAX variable, detached
                v.assign(value)


def jit_forward(model: Any) -> Callable[[Any], Any]:
    """``model``'s forward pass as one ``jax.jit`` of ``stateless_call``, built once:
    ``forward(x)`` → NumPy. The state is read at each call (``predict`` donates its buffers,
    and the model may have been trained since); each new input shape compiles once."""
    import jax

    @jax.jit
    def forward(trainable: Any, non_trainable: Any, x: Any) -> Any:
        return model.stateless_call(trainable, non_trainable, x, training=False)[0]

    def call(x: Any) -> Any:
        trainable = [v.value for v in model.trainable_variables]
        non_trainable = [v.value for v in model.non_trainable_variables]
        return to_numpy(forward(trainable, non_trainable, x))

    return call


def _jit_stateless(s: Subject) -> Prepared:
    forward = jit_forward(s.model)

    def run() -> Any:
        return forward(s.x)

    return Prepared(run, run)


def _fit_per_batch(s: Subject, model: Any) -> Callable[[], object]:
    batches = s.batches()

    def run() -> None:
        for xb, yb in batches:
            model.fit(xb, yb, epochs=1, verbose=0)

    return run


def jit_train_step(model: Any) -> tuple[Callable[..., Any], list[Any], Callable[[], None]]:
    """A train step jitted once over ``model``'s state (the copy's): ``step(state, x, y)`` →
    ``(loss, state)``, the state to start from, and ``write_back()`` putting the last state
    into the model's variables. ``model`` must be compiled with a loss and built (its loss
    taken once: ``evaluate`` builds its compiled loss and metrics)."""
    import jax
    import jax.numpy as jnp

    opt = model.optimizer
    if not getattr(opt, "built", False):
        opt.build(model.trainable_variables)
    metrics = [v.value for v in model.metrics_variables]

    def loss_and_updates(tv: Any, ntv: Any, x: Any, y: Any) -> Any:
        y_pred, ntv = model.stateless_call(tv, ntv, x, training=True)
        loss, (_, ntv, _) = model.stateless_compute_loss(
            tv, ntv, metrics, x=x, y=y, y_pred=y_pred, training=True
        )
        return loss, ntv

    grad = jax.value_and_grad(loss_and_updates, has_aux=True)

    @jax.jit
    def step(state: Any, x: Any, y: Any) -> Any:
        tv, ntv, ov = state
        (loss, ntv), grads = grad(tv, ntv, x, y)
        tv, ov = opt.stateless_apply(ov, grads, tv)
        return loss, (tv, ntv, ov)

    # copies both ways: Keras' own steps (evaluate, for the loss) donate the variables'
    # buffers, which would delete the state the step holds
    held = [
        tuple(
            [jnp.copy(v.value) for v in group]
            for group in (model.trainable_variables, model.non_trainable_variables, opt.variables)
        )
    ]

    def write_back() -> None:
        tv, ntv, ov = held[0]
        for group, values in (
            (model.trainable_variables, tv),
            (model.non_trainable_variables, ntv),
            (opt.variables, ov),
        ):
            for var, value in zip(group, values):
                var.assign(jnp.copy(value))

    return step, held, write_back


def _jit_train(s: Subject) -> Prepared:
    model = s.copy(compile=True)
    before = s.loss(model)
    step, held, write_back = jit_train_step(model)
    batches = s.batches()

    def run() -> Any:
        loss = None
        for xb, yb in batches:
            loss, held[0] = step(held[0], xb, yb)
        return float(loss) if loss is not None else None  # waits, as train_on_batch does

    def result() -> float:
        write_back()
        return s.loss(model)

    return Prepared(run, result, loss_before=before)


JAX_METHODS: tuple[Method, ...] = (
    Method(
        "predict",
        "model.predict(x)",
        INFERENCE,
        False,
        _predict,
        "the usual call; Keras sets up a data adapter, callbacks and their thread pool on "
        "every call",
    ),
    Method(
        "predict_on_batch",
        "model.predict_on_batch(x)",
        INFERENCE,
        False,
        _predict_on_batch,
        "Keras' jitted predict step on one batch, without predict's set-up",
    ),
    Method("model(x)", "model(x)", INFERENCE, True, _direct_call, "eager on JAX: op by op"),
    Method(
        "jit stateless_call",
        "jax.jit(lambda tv, ntv, x: model.stateless_call(tv, ntv, x)[0])",
        INFERENCE,
        False,
        _jit_stateless,
        "one jitted XLA program over the model's state, built once",
    ),
    Method(
        "fit",
        "model.fit(x, y, epochs=1)",
        TRAINING,
        False,
        _trainer(False, _fit),
        "one fit over all batches of x",
    ),
    Method(
        "fit per batch",
        "model.fit(xb, yb, epochs=1)",
        TRAINING,
        False,
        _trainer(False, _fit_per_batch),
        "one fit call per batch of x: Keras' set-up on every call",
    ),
    Method(
        "train_on_batch",
        "model.train_on_batch(xb, yb)",
        TRAINING,
        False,
        _trainer(False, _train_on_batch),
        "Keras' jitted train step, one call per batch",
    ),
    Method(
        "jit train step",
        "loss, state = jit_step(state, xb, yb)",
        TRAINING,
        False,
        _jit_train,
        "a train step jitted once: jax.value_and_grad of model.stateless_compute_loss, "
        "optimizer.stateless_apply; the state passed in and out",
    ),
)
