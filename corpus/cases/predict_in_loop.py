"""Keras 3: `model.predict` called once per incoming sample (profiled as `model.predict`)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="predict-in-loop",
    title="model.predict takes ~20 ms for one sample; my loop over samples is slow",
    source="tensorflow/tensorflow#40261; tensorflow/tensorflow#33340; keras-team/keras#18062",
    mechanism=(
        "every predict() builds a data adapter, a tf.data pipeline, an epoch iterator and a "
        "CallbackList, then converts outputs, all for a 1-row batch through a 16-32-1 MLP"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("predict_on_batch", "model(x, training=False)"),
    premise=86,
    iterations=10,
    also=("per-iteration-tracing",),
)

SAMPLES = 5  # one slow() = the user's loop over 5 incoming samples


def setup():
    import keras

    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
    )
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((1, 16)).astype("float32") for _ in range(SAMPLES)]
    model.predict(xs[0], verbose=0)
    return SimpleNamespace(model=model, xs=xs)


def slow(s):
    return [s.model.predict(x, verbose=0) for x in s.xs]


def fast(s):
    return [s.model.predict_on_batch(x) for x in s.xs]


def target(s):
    # What the user profiles: the call they suspect, on one sample.
    return s.model.predict, (s.xs[0],), {"verbose": 0}
