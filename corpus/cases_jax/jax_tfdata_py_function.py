"""Keras 3 on JAX fed by `tf.data`: the pipeline's `map` calls a NumPy function through
`tf.py_function` for every sample."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-tfdata-py-function",
    title="I kept my tf.data pipeline after moving the model to JAX and fit is input-bound",
    source="keras.io 'Keras 3 ... tf.data pipelines work with every backend'; "
    "tensorflow/tensorflow#15694 (py_function must take the GIL); tensorflow/docs "
    "data_performance.md ('vectorize the map', 'limit tf.py_function')",
    mechanism=(
        "ds.map(lambda x, y: (tf.py_function(preprocess, [x], tf.float32), y)).batch(32): "
        "every one of 1024 samples crosses into Python (GIL, NumPy on 64 floats) before "
        "batching, while the JAX train step waits; the same transform in TF ops, mapped "
        "once per batch after batch() with AUTOTUNE, stays in tf.data's runtime"
    ),
    expect="input-bound",
    fix_mentions=("py_function",),
    premise=5,
    iterations=4,
    backend="jax",
)

N, BATCH, FEATURES = 1024, 32, 64


def preprocess(x):
    """The user's per-sample preprocessing, written in NumPy."""
    v = x.numpy()
    v = np.log1p(np.abs(v)) * np.sign(v)
    v = (v - v.mean()) / (v.std() + 1e-6)
    return np.clip(v, -3.0, 3.0).astype("float32")


def preprocess_tf(x):
    """The same per row, in TF ops over a whole batch."""
    import tensorflow as tf

    v = tf.math.log1p(tf.abs(x)) * tf.sign(x)
    mean, var = tf.nn.moments(v, axes=[-1], keepdims=True)
    v = (v - mean) / (tf.sqrt(var) + 1e-6)
    return tf.clip_by_value(v, -3.0, 3.0)


def setup():
    import keras
    import tensorflow as tf  # the input pipeline is tf.data; the model runs on JAX

    rng = np.random.default_rng(21)
    x = rng.standard_normal((N, FEATURES)).astype("float32")
    y = rng.integers(0, 2, (N, 1)).astype("float32")

    def per_sample(xi, yi):
        out = tf.py_function(preprocess, [xi], tf.float32)
        out.set_shape((FEATURES,))
        return out, yi

    slow_ds = tf.data.Dataset.from_tensor_slices((x, y)).map(per_sample).batch(BATCH)
    fast_ds = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .batch(BATCH)
        .map(lambda xb, yb: (preprocess_tf(xb), yb), num_parallel_calls=tf.data.AUTOTUNE)
        .prefetch(tf.data.AUTOTUNE)
    )
    model = keras.Sequential(
        [
            keras.Input((FEATURES,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    model.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True))
    model.fit(slow_ds.take(2), epochs=1, verbose=0)
    model.fit(fast_ds.take(2), epochs=1, verbose=0)
    return SimpleNamespace(model=model, slow_ds=slow_ds, fast_ds=fast_ds)


def slow(s):
    return s.model.fit(s.slow_ds, epochs=1, verbose=0)


def fast(s):
    return s.model.fit(s.fast_ds, epochs=1, verbose=0)
