"""tf_keras (Keras 2): `model.predict` per sample in a loop (profiled as `model.predict`)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="predict-in-loop-tf-keras",
    title="tf.keras predict is 100x slower than calling the model on one sample",
    source="tensorflow/tensorflow#40261 (tomerk: predict 3.52 s vs model(x) 0.0133 s); "
    "tensorflow/tensorflow#31975",
    mechanism=(
        "tf_keras predict() builds a DataHandler (data adapter + tf.data dataset + iterator) "
        "and a CallbackList on every call; the 1-row forward pass is negligible"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("predict_on_batch", "model(x, training=False)"),
    premise=28,
    iterations=10,
    also=("per-iteration-tracing",),
)

SAMPLES = 5  # one slow() = the user's loop over 5 incoming samples


def setup():
    import tf_keras as keras

    keras.utils.set_random_seed(2)
    model = keras.Sequential(
        [keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
    )
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((1, 16)).astype("float32") for _ in range(SAMPLES)]
    model.predict(xs[0], verbose=0)
    return SimpleNamespace(model=model, xs=xs)


def slow(s):
    return [s.model.predict(x, verbose=0) for x in s.xs]


def fast(s):
    return [s.model(x, training=False).numpy() for x in s.xs]


def target(s):
    return s.model.predict, (s.xs[0],), {"verbose": 0}
