"""Keras 3: `fit` over 64 samples with batch_size=64 for many epochs (one step per epoch)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="many-tiny-epochs",
    title="each epoch takes 30 ms although it is a single step on 64 samples",
    source="keras-team/keras#18648 (tiny epochs: 1.5 ms/epoch Keras 2 vs ~32 ms Keras 3); "
    "NNPDF/nnpdf PR#1802; tensorflow/tensorflow#40754",
    mechanism=(
        "fit(epochs=E) with one batch per epoch: every epoch re-creates the epoch iterator, "
        "runs on_epoch_* callbacks, resets metrics and builds logs; the single step is cheap"
    ),
    expect="per-epoch-overhead",
    fix_mentions=("steps_per_epoch", "epochs"),
    premise=3.0,
    iterations=3,
    also=("per-iteration-tracing", "per-call-input-pipeline"),
)

EPOCHS = 8


def setup():
    import keras

    keras.utils.set_random_seed(7)
    model = keras.Sequential(
        [keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", "mse")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 16)).astype("float32")
    y = rng.standard_normal((64, 1)).astype("float32")
    # The fix: the same 8 steps over the same 64 samples, as one epoch of 8 batches.
    xr, yr = np.tile(x, (EPOCHS, 1)), np.tile(y, (EPOCHS, 1))
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)
    return SimpleNamespace(model=model, x=x, y=y, xr=xr, yr=yr)


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=64, epochs=EPOCHS, verbose=0)


def fast(s):
    return s.model.fit(s.xr, s.yr, batch_size=64, epochs=1, shuffle=False, verbose=0)
