"""Keras 3 on JAX: `model.predict` called once per incoming small batch (profiled as the
user's loop)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-predict-in-loop",
    title="predict on JAX takes ~10 ms for 8 rows; my serving loop over small batches is slow",
    source="keras-team/keras#22561 (Keras' own per-call overhead on every backend); "
    "keras-team/keras#18648; keras predict docstring (predict is for large inputs)",
    mechanism=(
        "every predict() builds a data adapter, a JAX epoch iterator and a CallbackList "
        "(handed to Keras' callback thread pool on JAX), then stacks and converts outputs, "
        "all for an 8-row batch through a 32-64-64-4 MLP whose jitted forward pass takes tens "
        "of microseconds; the fix calls that forward pass itself, a jax.jit of "
        "model.stateless_call built once (predict_on_batch, the smaller change, gains ~2-5x)"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("predict_on_batch", "stateless_call", "model(x"),
    premise=12,
    iterations=10,
    backend="jax",
    known_miss="callback-overhead ranks first with a TensorBoard fix: the time Keras spends "
    "handing predict's batch-end callbacks to its thread pool on JAX is read as callbacks, "
    "though the program has none",
)

BATCHES = 8  # one slow() = the user's loop over 8 incoming batches of 8 rows


def setup():
    import jax
    import keras

    model = keras.Sequential(
        [
            keras.Input((32,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(4),
        ]
    )
    rng = np.random.default_rng(101)
    xs = [rng.standard_normal((8, 32)).astype("float32") for _ in range(BATCHES)]
    model.predict(xs[0], verbose=0)

    # The fix: the forward pass jitted once, called with the weights as arrays.
    @jax.jit
    def forward(trainable, non_trainable, x):
        return model.stateless_call(trainable, non_trainable, x, training=False)[0]

    s = SimpleNamespace(model=model, xs=xs, forward=forward)
    s.trainable = [jax.numpy.array(v.value) for v in model.trainable_variables]
    s.non_trainable = [jax.numpy.array(v.value) for v in model.non_trainable_variables]
    fast(s)
    return s


def serve(model, xs):
    """The user's loop: one predict per incoming batch."""
    return [model.predict(x, verbose=0) for x in xs]


def slow(s):
    return serve(s.model, s.xs)


def fast(s):
    return [np.asarray(s.forward(s.trainable, s.non_trainable, x)) for x in s.xs]


def target(s):
    return serve, (s.model, s.xs), {}
