"""tf_keras `predict` of a conv net on one real batch of images: the time is in the convs."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="compute-bound-conv-predict",
    title="predict on 12 images takes a second; should I use predict_on_batch?",
    source="tensorflow/tensorflow#40261 (predict's overhead is per call, not per sample); "
    "keras predict docstring (predict is for large batches); keras-team/keras#10331",
    mechanism=(
        "one tf_keras predict() over a 12x64x64x3 batch through six 128-filter 3x3 conv layers: "
        "predict's per-call setup (~0.05-0.1 s here) is small against ~1 s of convolutions, so "
        "predict_on_batch (the best Python-side change) gains well under 10 %"
    ),
    expect="compute-bound",
    fix_mentions=("won't help", "jit_compile", "smaller model"),
    premise=1.1,
    iterations=2,
    python_fix=False,
)


BATCH = 12


def setup():
    import tf_keras as keras

    keras.utils.set_random_seed(39)
    model = keras.Sequential(
        [keras.Input((64, 64, 3))]
        + [keras.layers.Conv2D(128, 3, padding="same", activation="relu") for _ in range(6)]
        + [keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(10)]
    )
    rng = np.random.default_rng(39)
    X = rng.random((BATCH, 64, 64, 3)).astype("float32")
    model.predict(X, batch_size=BATCH, verbose=0)
    model.predict_on_batch(X)
    return SimpleNamespace(model=model, X=X)


def slow(s):
    return s.model.predict(s.X, batch_size=BATCH, verbose=0)


def fast(s):
    # The best Python-side change: no data adapter, no callbacks. Gains a few % here.
    return s.model.predict_on_batch(s.X)


def target(s):
    return s.model.predict, (s.X,), {"batch_size": BATCH, "verbose": 0}
