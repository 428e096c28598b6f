"""Keras 3 on JAX: `fit` over 64 rows for 48 epochs of one step each."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-many-tiny-epochs",
    title="fit with epochs=48 on a small dataset: each epoch takes longer than its one step",
    source="keras-team/keras#18648; tensorflow/tensorflow#48528 (many short epochs slower "
    "than few long ones); keras fit docs (steps_per_epoch)",
    mechanism=(
        "fit(x, y, batch_size=64, epochs=48) on 64 rows: each epoch is one jitted train step "
        "and the epoch's set-up around it (a new epoch iterator, on_epoch_begin/end callbacks, "
        "metric resets, logs gathered from the device); the same 48 steps as 4 epochs of 12 "
        "(np.tile the rows, steps_per_epoch) pay it 4 times"
    ),
    expect="per-epoch-overhead",
    fix_mentions=("steps_per_epoch", "epochs"),
    premise=3,
    iterations=3,
    backend="jax",
)

ROWS, EPOCHS, SPLIT = 64, 48, 12


def setup():
    import keras

    model = keras.Sequential(
        [keras.Input((10,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile(keras.optimizers.SGD(0.01), "mse", metrics=["mae"])
    rng = np.random.default_rng(14)
    x = rng.standard_normal((ROWS, 10)).astype("float32")
    y = rng.standard_normal((ROWS, 1)).astype("float32")
    xt, yt = np.tile(x, (SPLIT, 1)), np.tile(y, (SPLIT, 1))
    model.fit(x, y, batch_size=ROWS, epochs=2, verbose=0)
    model.fit(xt, yt, batch_size=ROWS, epochs=1, verbose=0)
    return SimpleNamespace(model=model, x=x, y=y, xt=xt, yt=yt)


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=ROWS, epochs=EPOCHS, shuffle=False, verbose=0)


def fast(s):
    # The same 48 steps over the same rows, as 4 epochs of 12 steps.
    return s.model.fit(
        s.xt, s.yt, batch_size=ROWS, epochs=EPOCHS // SPLIT, shuffle=False, verbose=0
    )
