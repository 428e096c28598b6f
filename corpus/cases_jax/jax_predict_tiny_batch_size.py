"""Keras 3 on JAX: offline `predict` over 2048 rows with `batch_size=4`."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-predict-tiny-batch-size",
    title="predict over 2000 rows takes a second on JAX for a model with 500 weights",
    source="keras-team/keras#102; keras predict docstring (batch_size defaults to 32); "
    "NVIDIA/DeepLearningExamples#118 (small batches bound by per-step overhead)",
    mechanism=(
        "predict(X, batch_size=4) runs 512 predict steps: each is a call of the jitted "
        "predict function, an epoch-iterator step, batch callbacks handed to Keras' thread "
        "pool and an output append; the rows themselves cost nothing (batch_size=1024: two "
        "steps, the same outputs)"
    ),
    expect="per-step-overhead",
    fix_mentions=("batch_size", "steps_per_execution"),
    premise=20,
    iterations=2,
    backend="jax",
)

N = 2048


def setup():
    import keras

    model = keras.Sequential(
        [keras.Input((12,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)]
    )
    X = np.random.default_rng(10).standard_normal((N, 12)).astype("float32")
    model.predict(X[:8], batch_size=4, verbose=0)
    model.predict(X, batch_size=1024, verbose=0)
    return SimpleNamespace(model=model, X=X)


def slow(s):
    return s.model.predict(s.X, batch_size=4, verbose=0)


def fast(s):
    return s.model.predict(s.X, batch_size=1024, verbose=0)
