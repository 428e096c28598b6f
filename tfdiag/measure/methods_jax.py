"""The execution methods :func:`tfdiag.compare` measures on Keras 3's JAX backend.

The inference methods a Keras-on-JAX user can call, timed like the TensorFlow ones
(:mod:`tfdiag.measure.methods`): ``predict``, ``predict_on_batch``, ``model(x)`` (eager on
JAX: the layers op by op) and a ``jax.jit`` of ``model.stateless_call`` built once over the
model's state. None imports TensorFlow or touches the model's weights (the state is read at
each call: ``predict`` donates its buffers). The training methods (they copy the model with
``clone_model``, which loads TensorFlow) are not measured on JAX yet.
"""

from __future__ import annotations

from typing import Any

from tfdiag.measure.methods import (
    INFERENCE,
    Method,
    Prepared,
    _direct_call,
    _predict,
    _predict_on_batch,
)
from tfdiag.measure.subject import Subject, to_numpy


def _jit_stateless(s: Subject) -> Prepared:
    import jax

    model = s.model

    @jax.jit
    def forward(trainable: Any, non_trainable: Any, x: Any) -> Any:
        return model.stateless_call(trainable, non_trainable, x, training=False)[0]

    def run() -> Any:
        trainable = [v.value for v in model.trainable_variables]
        non_trainable = [v.value for v in model.non_trainable_variables]
        return to_numpy(forward(trainable, non_trainable, s.x))

    return Prepared(run, run)


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
)
