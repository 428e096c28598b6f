"""Keras 3 `fit` on a `tf.data` pipeline whose `map` calls a NumPy function through
`tf.py_function` for every sample (diagnosed with `ProfileCallback` inside `fit`)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="py-function-map-fit",
    title="GPU/CPU mostly idle during fit; num_parallel_calls does not help my py_function map",
    source="tensorflow/tensorflow#15694 (mrry: py_func must take the GIL); "
    "tensorflow/tensorflow#14448; tensorflow/docs profiler.md ('limit the usage of "
    "tf.py_function')",
    mechanism=(
        "ds.map(lambda x, y: (tf.py_function(preprocess, [x], tf.float32), y)): every sample "
        "crosses into Python (GIL, NumPy on 32 floats) before batching, so the step waits on "
        "the per-sample Python calls; the same transform in TF ops stays in the runtime"
    ),
    expect="input-bound",
    fix_mentions=("py_function",),
    premise=2.1,
    iterations=10,
)

N, BATCH = 1024, 32


def preprocess(x):
    """The user's per-sample preprocessing, written in NumPy."""
    v = x.numpy()
    v = np.log1p(np.abs(v)) * np.sign(v)
    v = (v - v.mean()) / (v.std() + 1e-6)
    return np.clip(v, -3.0, 3.0).astype("float32")


def preprocess_tf(x):
    import tensorflow as tf

    v = tf.math.log1p(tf.abs(x)) * tf.sign(x)
    mean, var = tf.nn.moments(v, axes=[0])
    v = (v - mean) / (tf.sqrt(var) + 1e-6)
    return tf.clip_by_value(v, -3.0, 3.0)


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(23)
    rng = np.random.default_rng(23)
    x = (rng.standard_normal((N, 32)) * 3).astype("float32")
    y = rng.integers(0, 2, (N, 1)).astype("float32")
    base = tf.data.Dataset.from_tensor_slices((x, y))

    def py_map(a, b):
        out = tf.py_function(preprocess, [a], tf.float32)
        return tf.ensure_shape(out, (32,)), b

    slow_ds = base.map(py_map).batch(BATCH).prefetch(tf.data.AUTOTUNE)
    fast_ds = base.map(lambda a, b: (preprocess_tf(a), b)).batch(BATCH).prefetch(tf.data.AUTOTUNE)
    model = keras.Sequential(
        [keras.Input((32,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True))
    model.fit(fast_ds.take(2), verbose=0)
    return SimpleNamespace(model=model, slow_ds=slow_ds, fast_ds=fast_ds)


def slow(s):
    return s.model.fit(s.slow_ds, epochs=1, verbose=0)


def fast(s):
    return s.model.fit(s.fast_ds, epochs=1, verbose=0)


def diagnose(s, iterations):
    import tfdiag

    cb = tfdiag.keras.ProfileCallback(batches=(5, 5 + iterations))
    s.model.fit(s.slow_ds, epochs=1, verbose=0, callbacks=[cb])
    return cb.report
