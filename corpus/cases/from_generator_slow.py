"""Keras 3 `fit` on `Dataset.from_generator` over in-memory NumPy rows."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="from-generator-slow",
    title="Dataset.from_generator is far slower than from_tensor_slices for the same arrays",
    source="tensorflow/tensorflow#56258 (>10x slower than from_tensor_slices); "
    "tensorflow/tensorflow#45888 (tomerk: from_generator generally isn't very performant); "
    "tensorflow/docs profiler.md",
    mechanism=(
        "from_generator(lambda: zip(X, Y)) yields one row at a time from Python under the "
        "GIL, each converted to tensors, for data that is already an in-memory array"
    ),
    expect="input-bound",
    fix_mentions=("from_tensor_slices",),
    premise=4.5,
    iterations=2,
)

N, F, BATCH = 2048, 20, 64


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(27)
    rng = np.random.default_rng(27)
    X = rng.standard_normal((N, F)).astype("float32")
    Y = rng.standard_normal((N, 1)).astype("float32")
    sig = (tf.TensorSpec((F,), tf.float32), tf.TensorSpec((1,), tf.float32))
    gen_ds = tf.data.Dataset.from_generator(lambda: zip(X, Y), output_signature=sig).batch(BATCH)
    slices_ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH)
    model = keras.Sequential(
        [keras.Input((F,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", "mse")
    model.fit(slices_ds.take(2), verbose=0)
    return SimpleNamespace(model=model, gen_ds=gen_ds, slices_ds=slices_ds)


def slow(s):
    return s.model.fit(s.gen_ds, epochs=1, verbose=0)


def fast(s):
    return s.model.fit(s.slices_ds, epochs=1, verbose=0)


def target(s):
    return s.model.fit, (s.gen_ds,), {"epochs": 1, "verbose": 0}
