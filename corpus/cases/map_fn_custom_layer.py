"""A custom Keras layer that applies its per-sample transform with `tf.map_fn` over the
batch, inside Keras 3 `fit`."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="map-fn-custom-layer",
    title="my custom layer with tf.map_fn makes training ten times slower",
    source="tensorflow/tensorflow#24774 (why is map_fn slow: one loop iteration per "
    "element; use vectorized_map); tensorflow/tensorflow#34716; tensorflow/tensorflow"
    "#53778 (a custom layer's per-sample loop slows training)",
    mechanism=(
        "PairwiseFeatures.call maps a per-sample function (an outer product of the "
        "sample's 32 features, then a projection) over each of the 256 samples with "
        "tf.map_fn: a while loop of 256 iterations in the graph, forward and backward, of "
        "small ops each; the same math batched (an einsum over the batch, or "
        "tf.vectorized_map) is the fix"
    ),
    expect="compute-bound",
    fix_mentions=("vectorized_map", "map_fn"),
    premise=5,
    iterations=3,
)

N, BATCH, F = 8192, 256, 32


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(82)

    class PairwiseFeatures(keras.layers.Layer):
        def __init__(self, units, vectorized=False, **kwargs):
            super().__init__(**kwargs)
            self.units, self.vectorized = units, vectorized

        def build(self, input_shape):
            f = input_shape[-1]
            self.w = self.add_weight(shape=(f * f, self.units), initializer="glorot_uniform")

        def call(self, x):
            if self.vectorized:
                outer = tf.einsum("bi,bj->bij", x, x)
                return tf.matmul(tf.reshape(outer, [-1, F * F]), self.w)

            def per_sample(row):
                outer = tf.tensordot(row, row, axes=0)
                return tf.linalg.matvec(self.w, tf.reshape(outer, [-1]), transpose_a=True)

            return tf.map_fn(per_sample, x)

    def build(vectorized):
        m = keras.Sequential(
            [
                keras.Input((F,)),
                PairwiseFeatures(16, vectorized=vectorized),
                keras.layers.Dense(1),
            ]
        )
        m.compile("adam", "mse")
        return m

    model, fixed = build(False), build(True)
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(82)
    x = rng.standard_normal((N, F)).astype("float32")
    y = rng.standard_normal((N, 1)).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).prefetch(tf.data.AUTOTUNE)
    s = SimpleNamespace(model=model, fixed=fixed, ds=ds)
    slow(s)
    fast(s)
    return s


def slow(s):
    return s.model.fit(s.ds, epochs=1, verbose=0)


def fast(s):
    # The fix: the per-sample math written for the whole batch.
    return s.fixed.fit(s.ds, epochs=1, verbose=0)


def target(s):
    return s.model.fit, (s.ds,), {"epochs": 1, "verbose": 0}
