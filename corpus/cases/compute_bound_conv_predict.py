"""Keras 3 `predict` of a conv net on one real batch of images: the time is in the convs."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="compute-bound-conv-predict",
    title="predict on 96 images takes most of a second; should I use predict_on_batch?",
    source="tensorflow/tensorflow#40261 (predict's overhead is per call, not per sample); "
    "keras predict docstring (predict is for large batches); keras-team/keras#10331",
    mechanism=(
        "one predict() over a 96x96x96x3 batch through four 3x3 conv layers: predict's "
        "per-call setup is tens of ms against hundreds of ms of convolutions, so "
        "predict_on_batch (the best Python-side change) gains ~nothing"
    ),
    expect="compute-bound",
    fix_mentions=("won't help", "jit_compile", "smaller model"),
    premise=1.0,
    iterations=2,
    python_fix=False,
)


def setup():
    import keras

    keras.utils.set_random_seed(39)
    model = keras.Sequential(
        [
            keras.Input((96, 96, 3)),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(10),
        ]
    )
    rng = np.random.default_rng(39)
    X = rng.random((96, 96, 96, 3)).astype("float32")
    model.predict(X, batch_size=96, verbose=0)
    model.predict_on_batch(X)
    return SimpleNamespace(model=model, X=X)


def slow(s):
    return s.model.predict(s.X, batch_size=96, verbose=0)


def fast(s):
    # The best Python-side change: no data adapter, no callbacks. Not expected to help.
    return s.model.predict_on_batch(s.X)


def target(s):
    return s.model.predict, (s.X,), {"batch_size": 64, "verbose": 0}
