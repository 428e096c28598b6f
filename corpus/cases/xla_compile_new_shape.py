"""A Keras 3 model compiled with `jit_compile=True` serving requests of a different size on
every call (`predict_on_batch`), diagnosed with `tfdiag.profile` on one request."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="xla-compile-new-shape",
    title="jit_compile=True made my model fast in the benchmark but my service is slow",
    source="tensorflow/tensorflow#43745 (XLA recompiles for every input shape); "
    "keras-team/keras#19532 (jit_compile with variable batch sizes)",
    mechanism=(
        "Keras traces predict's step once to a (None, 16) signature, but XLA compiles one "
        "executable per concrete batch size inside the graph call: every request of a new "
        "size pays a compilation (~0.1-0.5 s) for ~1 ms of work"
    ),
    expect="xla-compile-per-shape",
    fix_mentions=("pad", "drop_remainder", "jit_compile=False"),
    premise=20,
    iterations=6,
)

BUCKET, FEATURES = 512, 16


def setup():
    import keras

    keras.utils.set_random_seed(73)
    model = keras.Sequential(
        [
            keras.Input((FEATURES,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    model.compile("adam", "mse", jit_compile=True)
    x = np.random.default_rng(73).standard_normal((BUCKET, FEATURES)).astype("float32")
    s = SimpleNamespace(model=model, x=x, request=0)
    slow(s)
    fast(s)
    return s


def _next_size(s):
    s.request += 1
    return 17 + (s.request * 37) % (BUCKET - 17)  # a size not seen for hundreds of requests


def slow(s):
    n = _next_size(s)
    return s.model.predict_on_batch(s.x[:n])


def fast(s):
    n = _next_size(s)
    padded = np.zeros((BUCKET, FEATURES), "float32")  # one shape: one compilation
    padded[:n] = s.x[:n]
    return s.model.predict_on_batch(padded)[:n]
