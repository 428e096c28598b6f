"""Keras 3 `predict` over a model whose custom layer computes its activation in Python
(`np.vectorize(math.erf)`) through `tf.py_function`."""

import math
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="py-function-in-layer",
    title="one custom layer made my model's inference 5x slower",
    source="keras-team/keras#6163 (py_func inside a custom layer's call); tensorflow/tensorflow"
    "#53778 (custom layer slows training); tensorflow/docs profiler.md",
    mechanism=(
        "ErfGate.call wraps np.vectorize(math.erf) in tf.py_function: every predict step "
        "leaves the graph and evaluates 32768 erf calls in Python under the GIL; tf.math.erf is "
        "one fused kernel"
    ),
    expect="python-in-graph",
    fix_mentions=("py_function", "tf.math.erf"),
    premise=1.5,
    iterations=3,
)

N, BATCH = 8192, 256

_erf = np.vectorize(math.erf, otypes=[np.float32])


def make_layer(use_python):
    import keras
    import tensorflow as tf

    class ErfGate(keras.layers.Layer):
        def call(self, x):
            if use_python:
                y = tf.py_function(lambda t: _erf(t.numpy()), [x], tf.float32)
                y = tf.ensure_shape(y, x.shape)
            else:
                y = tf.math.erf(x)
            return x * 0.5 * (1.0 + y)

    return ErfGate()


def setup():
    import keras

    keras.utils.set_random_seed(32)

    def build(use_python):
        return keras.Sequential(
            [
                keras.Input((32,)),
                keras.layers.Dense(128),
                make_layer(use_python),
                keras.layers.Dense(4),
            ]
        )

    model, fixed = build(True), build(False)
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(32)
    X = rng.standard_normal((N, 32)).astype("float32")
    model.predict(X[:BATCH], batch_size=BATCH, verbose=0)
    fixed.predict(X[:BATCH], batch_size=BATCH, verbose=0)
    return SimpleNamespace(model=model, fixed=fixed, X=X)


def slow(s):
    return s.model.predict(s.X, batch_size=BATCH, verbose=0)


def fast(s):
    return s.fixed.predict(s.X, batch_size=BATCH, verbose=0)


def target(s):
    return s.model.predict, (s.X,), {"batch_size": BATCH, "verbose": 0}
