"""Keras 3: validation computed with one `evaluate` call per held-out chunk, every round."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="evaluate-in-loop",
    title="scoring my validation chunks with evaluate takes longer than training them",
    source="keras-team/keras#14117 (evaluate vs test_on_batch); tensorflow/tensorflow#40261 "
    "(same per-call setup as predict)",
    mechanism=(
        "score_chunks() calls model.evaluate on each 32-row chunk: each call builds a data "
        "adapter, a tf.data epoch iterator and callbacks for a single test step"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("test_on_batch",),
    premise=31,
    iterations=5,
    also=("per-iteration-tracing",),
)

CHUNKS = 3


def setup():
    import keras

    keras.utils.set_random_seed(6)
    model = keras.Sequential(
        [keras.Input((10,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", "mse", metrics=["mae"])
    rng = np.random.default_rng(6)
    xs = rng.standard_normal((CHUNKS, 32, 10)).astype("float32")
    ys = rng.standard_normal((CHUNKS, 32, 1)).astype("float32")
    model.evaluate(xs[0], ys[0], verbose=0)
    model.test_on_batch(xs[0], ys[0])
    return SimpleNamespace(model=model, xs=xs, ys=ys)


def score_chunks(model, xs, ys):
    return [model.evaluate(x, y, batch_size=32, verbose=0) for x, y in zip(xs, ys)]


def score_chunks_fixed(model, xs, ys):
    return [model.test_on_batch(x, y) for x, y in zip(xs, ys)]


def slow(s):
    return score_chunks(s.model, s.xs, s.ys)


def fast(s):
    return score_chunks_fixed(s.model, s.xs, s.ys)


def target(s):
    return score_chunks, (s.model, s.xs, s.ys), {}
