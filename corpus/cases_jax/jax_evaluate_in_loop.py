"""Keras 3 on JAX: `evaluate` called once per validation batch in the user's loop."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-evaluate-in-loop",
    title="scoring my validation set one evaluate() per chunk is slow on JAX",
    source="keras-team/keras#22561 (per-call overhead of evaluate on every backend); "
    "tensorflow/tensorflow#33024 (evaluate per batch much slower than test_on_batch)",
    mechanism=(
        "the user's loop calls model.evaluate(x, y) on each of 16 chunks of 32 rows and "
        "averages the scores: every call builds a data adapter, a JAX epoch iterator, a "
        "CallbackList and fresh metric state, for one jitted test step; one evaluate over "
        "all rows (batch_size=32, the same steps) pays that once (test_on_batch per chunk, "
        "the smaller change, gains ~2x)"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("test_on_batch", "one `evaluate`", "one evaluate"),
    premise=4,
    iterations=5,
    backend="jax",
    known_miss="callback-overhead (a TensorBoard fix, though the program has no callbacks) "
    "or per-step-overhead (a larger batch_size, though each call is one step) ranks first, "
    "run to run: the evaluate call's own set-up is not named",
)

SHARDS = 16


def setup():
    import keras

    model = keras.Sequential(
        [
            keras.Input((20,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(3),
        ]
    )
    model.compile(
        "adam",
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((SHARDS, 32, 20)).astype("float32")
    ys = rng.integers(0, 3, (SHARDS, 32)).astype("int32")
    model.evaluate(xs[0], ys[0], verbose=0)
    x_all, y_all = xs.reshape(-1, 20), ys.reshape(-1)
    model.evaluate(x_all, y_all, batch_size=32, verbose=0)
    return SimpleNamespace(model=model, xs=xs, ys=ys, x_all=x_all, y_all=y_all)


def score(model, xs, ys):
    """The user's loop: one evaluate per chunk, the mean of their loss and accuracy."""
    scores = [model.evaluate(x, y, verbose=0) for x, y in zip(xs, ys)]
    return np.mean(scores, axis=0)


def slow(s):
    return score(s.model, s.xs, s.ys)


def fast(s):
    return s.model.evaluate(s.x_all, s.y_all, batch_size=32, verbose=0)


def target(s):
    return score, (s.model, s.xs, s.ys), {}
