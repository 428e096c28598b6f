"""A custom Keras layer that calls `.numpy()` (NumPy's percentile) in `call`, so the user
compiled with `run_eagerly=True` to get past "numpy() is only available when eager
execution is enabled"."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="numpy-layer-run-eagerly",
    title="I had to set run_eagerly=True for my custom layer and training is slow now",
    source="tensorflow/tensorflow#27519 (numpy() inside a layer's call: 'Tensor object "
    "has no attribute numpy' in graph mode, answered with run-functions-eagerly); "
    "tensorflow/tensorflow#38038 (custom metrics and losses with numpy(), run_eagerly); "
    "tensorflow/tensorflow#46765 (numpy() in a custom layer's call)",
    mechanism=(
        "RobustScale.call computes np.percentile of its input with .numpy(): the user "
        "compiled run_eagerly=True, so every step runs the model, loss, gradients and "
        "Adam eagerly op by op; the percentile in TensorFlow ops (a sort and a gather) "
        "lets the step run as a graph again"
    ),
    expect="eager-execution",
    fix_mentions=("run_eagerly",),
    premise=5,
    iterations=3,
)

N, BATCH = 512, 32


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(83)

    class RobustScale(keras.layers.Layer):
        def __init__(self, in_graph=False, **kwargs):
            super().__init__(**kwargs)
            self.in_graph = in_graph

        def compute_output_shape(self, input_shape):
            return input_shape

        def call(self, x):
            if self.in_graph:
                ordered = tf.sort(x, axis=-1)
                n = tf.shape(x)[-1]
                q = tf.cast(tf.round(0.9 * tf.cast(n - 1, tf.float32)), tf.int32)
                p90 = ordered[:, q : q + 1]
            else:
                p90 = tf.constant(
                    np.percentile(x.numpy(), 90, axis=-1, keepdims=True, method="nearest")
                )
            return x / (p90 + 1e-6)

    def build(in_graph):
        m = keras.Sequential(
            [
                keras.Input((64,)),
                RobustScale(in_graph=in_graph),
                keras.layers.Dense(64, activation="relu"),
                keras.layers.Dense(64, activation="relu"),
                keras.layers.Dense(10),
            ]
        )
        m.compile(
            "adam",
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            run_eagerly=not in_graph,
        )
        return m

    model, fixed = build(False), build(True)
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(83)
    x = rng.random((N, 64)).astype("float32") + 0.1
    y = rng.integers(0, 10, (N,)).astype("int32")
    s = SimpleNamespace(model=model, fixed=fixed, x=x, y=y)
    slow(s)
    fast(s)
    return s


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0)


def fast(s):
    # The fix: the layer in TensorFlow ops, compiled without run_eagerly.
    return s.fixed.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0)


def target(s):
    return s.model.fit, (s.x, s.y), {"batch_size": BATCH, "epochs": 1, "verbose": 0}
