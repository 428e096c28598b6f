"""Keras 3 `fit` on sliding windows made with `Dataset.window(...).flat_map(lambda w:
w.batch(W))`, the tf.data recipe for time series found in answers and tutorials."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="window-flat-map-series",
    title="my windowed time-series dataset is much slower than the old TimeseriesGenerator",
    source="tensorflow/tensorflow#44046 (the flat_map workaround 'made the preprocessing "
    "way slower'); tensorflow/tensorflow#39414; tensorflow/tensorflow#43703",
    mechanism=(
        "window(64, shift=1) makes a nested dataset per window and flat_map(batch) "
        "builds and runs it for each of ~4000 windows per epoch, then a per-element map "
        "splits inputs from targets: per-window dataset work, not the model; framing "
        "the series once (tf.signal.frame) and slicing the frames is the fix "
        "(keras.utils.timeseries_dataset_from_array, which gathers each window per "
        "element, measured 0.81x here: no faster)"
    ),
    expect="input-bound",
    fix_mentions=("tf.signal.frame",),
    premise=8,
    iterations=3,
)

N, WINDOW, BATCH = 4096, 64, 128


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(79)
    rng = np.random.default_rng(79)
    series = rng.standard_normal(N + WINDOW + 1).cumsum().astype("float32")

    def build():
        m = keras.Sequential(
            [
                keras.Input((WINDOW,)),
                keras.layers.Dense(32, activation="relu"),
                keras.layers.Dense(1),
            ]
        )
        m.compile("adam", "mse")
        return m

    model, fixed = build(), build()
    fixed.set_weights(model.get_weights())
    ds = (
        tf.data.Dataset.from_tensor_slices(series)
        .window(WINDOW + 1, shift=1, drop_remainder=True)
        .flat_map(lambda w: w.batch(WINDOW + 1))
        .map(lambda w: (w[:-1], w[-1:]))
        .batch(BATCH)
        .prefetch(tf.data.AUTOTUNE)
    )
    frames = tf.signal.frame(series, WINDOW + 1, 1)
    ds_fixed = (
        tf.data.Dataset.from_tensor_slices((frames[:, :-1], frames[:, -1:]))
        .batch(BATCH)
        .prefetch(tf.data.AUTOTUNE)
    )
    s = SimpleNamespace(model=model, fixed=fixed, ds=ds, ds_fixed=ds_fixed)
    slow(s)
    fast(s)
    return s


def slow(s):
    return s.model.fit(s.ds, epochs=1, verbose=0)


def fast(s):
    # The fix: the series framed once, the frames sliced into batches.
    return s.fixed.fit(s.ds_fixed, epochs=1, verbose=0)


def target(s):
    return s.model.fit, (s.ds,), {"epochs": 1, "verbose": 0}
