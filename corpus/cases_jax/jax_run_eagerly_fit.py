"""Keras 3 on JAX: `compile(run_eagerly=True)` left on after debugging; `fit` runs op by op."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-run-eagerly-fit",
    title="training on the JAX backend is dozens of times slower than I expected per step",
    source="keras-team/keras#19639 (JAX fit slow); keras Model.compile docs (run_eagerly: "
    "'leave False unless debugging'); USGS-R/river-dl PR#109",
    mechanism=(
        "compile(run_eagerly=True): Keras skips jax.jit for the train step, so every step's "
        "forward pass, loss, jax.grad and Adam update are dispatched op by op from Python "
        "(each a small XLA computation) instead of one compiled call"
    ),
    expect="eager-execution",
    fix_mentions=("run_eagerly",),
    premise=40,
    iterations=2,
    backend="jax",
    known_miss="no-known-cause ranks first: no finding names the op-by-op train step that "
    "run_eagerly=True gives on JAX",
)


def setup():
    import keras

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
