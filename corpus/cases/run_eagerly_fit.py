"""Keras 3: `compile(run_eagerly=True)` left on after debugging; `fit` runs op by op."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="run-eagerly-fit",
    title="training got 3x slower per step and I don't know what changed",
    source="USGS-R/river-dl PR#109 (run_eagerly=True ~3x slower per step); "
    "tensorflow/tensorflow#30561; tensorflow/tensorflow#27472",
    mechanism=(
        "compile(run_eagerly=True): every train step's forward pass, loss, gradient and Adam "
        "update are dispatched op by op from Python instead of as one graph call"
    ),
    expect="eager-execution",
    fix_mentions=("run_eagerly",),
    premise=3.7,
    iterations=2,
)


def setup():
    import keras

    keras.utils.set_random_seed(18)

    def build(eager):
        m = keras.Sequential(
            [keras.Input((16,))]
            + [keras.layers.Dense(64, activation="relu") for _ in range(4)]
            + [keras.layers.Dense(1)]
        )
        m.compile(keras.optimizers.Adam(1e-3), "mse", metrics=["mae"], run_eagerly=eager)
        return m

    model, fixed = build(True), build(False)
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(18)
    x = rng.standard_normal((256, 16)).astype("float32")
    y = rng.standard_normal((256, 1)).astype("float32")
    model.fit(x[:64], y[:64], batch_size=32, verbose=0)
    fixed.fit(x[:64], y[:64], batch_size=32, verbose=0)
    return SimpleNamespace(model=model, fixed=fixed, x=x, y=y)


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=32, epochs=1, shuffle=False, verbose=0)


def fast(s):
    return s.fixed.fit(s.x, s.y, batch_size=32, epochs=1, shuffle=False, verbose=0)
