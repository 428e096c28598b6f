"""Keras 3 on JAX: `compile(jit_compile=False)` (copied from a TensorFlow-era snippet) makes
every train step run op by op."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-jit-compile-false",
    title="after switching KERAS_BACKEND to jax, fit is much slower than on TensorFlow",
    source="keras Model.compile docs (jit_compile: 'on the JAX backend ... the model is not "
    "compiled with jax.jit' when False); keras-team/keras#19639; keras-team/keras#18648",
    mechanism=(
        "compile(..., jit_compile=False), kept from a TensorFlow configuration where it only "
        "turned XLA off: on JAX it means no jax.jit around the train step, so each step's "
        "forward pass, jax.grad and optimizer update are dispatched op by op from Python"
    ),
    expect="eager-execution",
    fix_mentions=("jit_compile",),
    premise=20,
    iterations=2,
    backend="jax",
    known_miss="no-known-cause ranks first (its generic fix happens to name jit_compile): no "
    "finding names the op-by-op train step that jit_compile=False gives on JAX",
)


def setup():
    import keras

    def build(jit):
        m = keras.Sequential(
            [keras.Input((32,))]
            + [keras.layers.Dense(128, activation="relu") for _ in range(3)]
            + [keras.layers.Dense(10)]
        )
        m.compile(
            keras.optimizers.Adam(1e-3),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
            jit_compile=jit,
        )
        return m

    model, fixed = build(False), build(True)
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(41)
    x = rng.standard_normal((512, 32)).astype("float32")
    y = rng.integers(0, 10, (512,)).astype("int32")
    model.fit(x[:64], y[:64], batch_size=64, verbose=0)
    fixed.fit(x[:64], y[:64], batch_size=64, verbose=0)
    return SimpleNamespace(model=model, fixed=fixed, x=x, y=y)


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=64, epochs=1, shuffle=False, verbose=0)


def fast(s):
    return s.fixed.fit(s.x, s.y, batch_size=64, epochs=1, shuffle=False, verbose=0)
