"""One program for two cases (``xla-compile-new-shape``, ``xla-compile-new-shape-run``): a
Keras 3 model compiled with `jit_compile=True` serving requests of a new size on every call
(`predict_on_batch`). Run as a script it serves ``REQUESTS`` requests
(``python -m tfdiag run corpus/cases/_xla_program.py``)."""

from types import SimpleNamespace

import numpy as np

REQUESTS = 24
BUCKET, FEATURES = 512, 16


def setup(warm=True):
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
    if warm:
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


if __name__ == "__main__":
    state = setup(warm=False)
    for _ in range(REQUESTS):
        slow(state)
