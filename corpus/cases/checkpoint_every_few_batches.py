"""Keras 3 `fit` with `ModelCheckpoint(save_freq=2)`: the whole model is written to disk
every second batch."""

import os
import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="checkpoint-every-few-batches",
    title="training is much slower since I added a ModelCheckpoint",
    source="keras-team/keras#18577 and tensorflow/tensorflow#33163 (save_freq in batches "
    "checkpoints far too often); Keras docs: ModelCheckpoint `save_freq`",
    mechanism=(
        "ModelCheckpoint(save_freq=2) saves the model's weights (an .h5 file) every second "
        "batch of 48; saving once per epoch (`save_freq='epoch'`) does the same training"
    ),
    expect="callback-overhead",
    fix_mentions=("save_freq=",),
    premise=3.0,
    iterations=3,
)

N, BATCH = 768, 16


def setup():
    import keras

    keras.utils.set_random_seed(5)
    model = keras.Sequential(
        [
            keras.Input((32,)),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    model.compile("adam", "mse")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((N, 32)).astype("float32")
    y = rng.standard_normal((N, 1)).astype("float32")
    folder = tempfile.mkdtemp(prefix="tfdiag-ckpt-")
    model.fit(x[:64], y[:64], batch_size=BATCH, verbose=0)
    return SimpleNamespace(model=model, x=x, y=y, path=os.path.join(folder, "w.weights.h5"))


def _checkpoint(s, freq):
    import keras

    return keras.callbacks.ModelCheckpoint(s.path, save_weights_only=True, save_freq=freq)


def slow(s):
    return s.model.fit(
        s.x, s.y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[_checkpoint(s, 2)]
    )


def fast(s):
    return s.model.fit(
        s.x, s.y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[_checkpoint(s, "epoch")]
    )


def target(s):
    return (
        s.model.fit,
        (s.x, s.y),
        {"batch_size": BATCH, "epochs": 1, "verbose": 0, "callbacks": [_checkpoint(s, 2)]},
    )
