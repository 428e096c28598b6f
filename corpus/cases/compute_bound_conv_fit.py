"""Keras 3 `fit` of a conv net on a batched, cached, prefetched `tf.data` pipeline."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="compute-bound-conv-fit",
    title="is my training input-bound or is the model just expensive?",
    source="tensorflow/docs data_performance.ipynb (cache + prefetch); XProf input-pipeline "
    "analyzer ('NOT input-bound'); keras-team/keras-core PR#838 (steps_per_execution helps "
    "small models, not big steps)",
    mechanism=(
        "three 32x64x64x3 batches per epoch, already cached and prefetched, through a conv "
        "net whose forward+backward is ~100+ ms per step: the data is ready and the per-step "
        "Python is negligible, so steps_per_execution (the best Python-side change) gains "
        "~nothing"
    ),
    expect="compute-bound",
    fix_mentions=("won't help", "jit_compile", "mixed precision", "smaller model"),
    premise=1.0,
    iterations=2,
    python_fix=False,
)

N, BATCH = 96, 32


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(40)

    def build(spe):
        m = keras.Sequential(
            [
                keras.Input((64, 64, 3)),
                keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                keras.layers.MaxPooling2D(),
                keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
                keras.layers.GlobalAveragePooling2D(),
                keras.layers.Dense(10),
            ]
        )
        m.compile(
            keras.optimizers.Adam(1e-3),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            steps_per_execution=spe,
        )
        return m

    model, fixed = build(1), build(4)
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(40)
    X = rng.random((N, 64, 64, 3)).astype("float32")
    Y = rng.integers(0, 10, (N,)).astype("int32")
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH).cache().prefetch(tf.data.AUTOTUNE)
    model.fit(ds, epochs=1, verbose=0)
    fixed.fit(ds, epochs=1, verbose=0)
    return SimpleNamespace(model=model, fixed=fixed, ds=ds)


def slow(s):
    return s.model.fit(s.ds, epochs=1, verbose=0)


def fast(s):
    return s.fixed.fit(s.ds, epochs=1, verbose=0)


def target(s):
    return s.model.fit, (s.ds,), {"epochs": 1, "verbose": 0}
