"""Keras 3 on JAX: `predict` of a conv net on one large batch of images: the time is in the
convolutions (a healthy control)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-compute-bound-conv-predict",
    title="predict on 8 images takes a third of a second on JAX; is it Keras overhead?",
    source="keras predict docstring (predict is for large batches); keras-team/keras#22561 "
    "(Keras' per-call overhead is fixed per call, not per sample)",
    mechanism=(
        "one predict() over an 8x64x64x3 batch through six 64-filter 3x3 conv layers, jitted "
        "by Keras: predict's per-call set-up (a few ms) is small against the XLA "
        "convolutions, so predict_on_batch (the best Python-side change) gains a few percent"
    ),
    expect="compute-bound",
    fix_mentions=("won't help", "smaller model", "mixed precision", "bfloat16"),
    premise=1.0,
    iterations=2,
    python_fix=False,
    backend="jax",
    known_miss="callback-overhead ranks first with a TensorBoard fix on a predict with no "
    "callbacks (Keras' callback thread pool on JAX read as callbacks); the convolutions "
    "are not named",
)

BATCH = 8


def setup():
    import keras

    model = keras.Sequential(
        [keras.Input((64, 64, 3))]
        + [keras.layers.Conv2D(64, 3, padding="same", activation="relu") for _ in range(6)]
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
    return np.asarray(s.model.predict_on_batch(s.X))


def target(s):
    return s.model.predict, (s.X,), {"batch_size": BATCH, "verbose": 0}
