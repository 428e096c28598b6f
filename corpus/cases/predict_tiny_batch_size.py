"""Keras 3: offline `predict` over 1024 rows with batch_size=4."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="predict-tiny-batch-size",
    title="predict over 1000 rows takes a second for a model with 500 weights",
    source="keras-team/keras#102; NVIDIA/DeepLearningExamples#118 (batch 1 bound by launch "
    "overhead); tensorflow/docs gpu_performance_analysis.md",
    mechanism=(
        "predict(X, batch_size=4) runs 256 predict steps: each is a tf.function call, an "
        "iterator get_next, callbacks and an output append; the rows themselves cost nothing"
    ),
    expect="per-step-overhead",
    fix_mentions=("batch_size", "steps_per_execution"),
    premise=3.3,
    iterations=2,
)


def setup():
    import keras

    keras.utils.set_random_seed(10)
    model = keras.Sequential(
        [keras.Input((12,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)]
    )
    rng = np.random.default_rng(10)
    X = rng.standard_normal((1024, 12)).astype("float32")
    model.predict(X[:8], batch_size=4, verbose=0)
    model.predict(X, batch_size=1024, verbose=0)
    return SimpleNamespace(model=model, X=X)


def slow(s):
    return s.model.predict(s.X, batch_size=4, verbose=0)


def fast(s):
    return s.model.predict(s.X, batch_size=1024, verbose=0)
