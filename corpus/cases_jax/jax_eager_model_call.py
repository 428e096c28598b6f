"""Keras 3 on JAX: a custom scoring layer stack called as `model(x)` on every request, outside
any jitted function (the user's own loop, not a Keras method)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-eager-model-call",
    title="calling my Keras model on JAX as model(x) per request is slower than predict_on_batch",
    source="keras-team/keras#19315 (Keras 3 loops calling the model directly lose jit); "
    "keras-team/keras#22561 (eager vs jitted on JAX); keras.io actor-critic example "
    "(model(state) per environment step)",
    mechanism=(
        "model(x) on JAX outside jax.jit runs every layer's __call__ in Python and dispatches "
        "each op (matmul, add, activation, layer norm) to its compiled primitive one at a "
        "time; a residual block model of 4 blocks is ~40 ops per call; a forward pass "
        "jitted once (stateless_call) runs them as one XLA program"
    ),
    expect="eager-execution",
    fix_mentions=("jax.jit", "stateless_call", "predict_on_batch"),
    premise=60,  # 162x measured here (5 rounds, load ~6)
    iterations=8,
    backend="jax",
)

REQUESTS = 12  # one slow() = the user's loop over 12 requests of 2 rows


def _model():  # type: ignore[no-untyped-def]
    import keras

    inputs = keras.Input((24,))
    h = keras.layers.Dense(48)(inputs)
    for _ in range(4):  # residual blocks
        r = keras.layers.Dense(48, activation="gelu")(h)
        r = keras.layers.Dense(48)(r)
        h = keras.layers.LayerNormalization()(keras.layers.Add()([h, r]))
    return keras.Model(inputs, keras.layers.Dense(3)(h))


def setup():
    import jax

    model = _model()
    rng = np.random.default_rng(211)
    reqs = [rng.standard_normal((2, 24)).astype("float32") for _ in range(REQUESTS)]

    @jax.jit
    def forward(trainable, non_trainable, x):
        return model.stateless_call(trainable, non_trainable, x, training=False)[0]

    s = SimpleNamespace(model=model, reqs=reqs, forward=forward)
    s.trainable = [v.value for v in model.trainable_variables]
    s.non_trainable = [v.value for v in model.non_trainable_variables]
    slow(s)
    fast(s)
    return s


def score(model, reqs):
    """The user's loop: the model called directly on each request."""
    return [np.asarray(model(x, training=False)).argmax(-1) for x in reqs]


def slow(s):
    return score(s.model, s.reqs)


def fast(s):
    return [np.asarray(s.forward(s.trainable, s.non_trainable, x)).argmax(-1) for x in s.reqs]


def target(s):
    return score, (s.model, s.reqs), {}
