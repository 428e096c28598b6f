"""tf_keras: a PINN-style fit with thousands of one-step epochs (whole data set = one batch)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="many-tiny-epochs-tf-keras",
    title="per-epoch overhead is half of my training time (one batch per epoch)",
    source="NNPDF/nnpdf PR#1802 (per-epoch overhead ~50% of training time, fix x2), "
    "NNPDF/nnpdf PR#1939; keras-team/keras#18648",
    mechanism=(
        "the whole data set is one batch, so fit(epochs=E) runs E one-step epochs: tf_keras "
        "builds an epoch iterator, runs epoch callbacks and syncs logs per epoch"
    ),
    expect="per-epoch-overhead",
    fix_mentions=("steps_per_epoch", "epochs"),
    premise=2.1,
    iterations=3,
    also=("per-iteration-tracing", "per-call-input-pipeline"),
)

EPOCHS = 40


def setup():
    import tensorflow as tf
    import tf_keras as keras

    keras.utils.set_random_seed(8)
    model = keras.Sequential(
        [
            keras.Input((1,)),
            keras.layers.Dense(20, activation="tanh"),
            keras.layers.Dense(20, activation="tanh"),
            keras.layers.Dense(1),
        ]
    )
    model.compile(keras.optimizers.Adam(1e-3), "mse")
    x = np.linspace(-1, 1, 128, dtype="float32")[:, None]
    y = np.sin(3 * x).astype("float32")
    # The fix: one epoch of E steps over the same full batch.
    ds = tf.data.Dataset.from_tensors((x, y)).repeat()
    model.fit(x, y, batch_size=128, epochs=1, verbose=0)
    model.fit(ds, steps_per_epoch=EPOCHS, epochs=1, verbose=0)
    return SimpleNamespace(model=model, x=x, y=y, ds=ds)


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=128, epochs=EPOCHS, verbose=0)


def fast(s):
    return s.model.fit(s.ds, steps_per_epoch=EPOCHS, epochs=1, verbose=0)
