"""A `tf.function` scoring request features passed as a Python list: one trace per request."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="retrace-python-list",
    title="my tf.function server is slow and warns about retracing on every request",
    source="tensorflow/tensorflow#32157 (Python objects instead of tensors); tf.function "
    "guide: 'passing Python lists ... each distinct value creates a new graph'",
    mechanism=(
        "score(features) gets the request's JSON list of floats; a list of Python floats is "
        "part of the trace key by value, so every request traces the model again"
    ),
    expect="per-iteration-tracing",
    fix_mentions=("tf.constant", "convert_to_tensor", "np.asarray", "input_signature"),
    premise=25,
    iterations=5,
)

REQUESTS = 3


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(14)
    model = keras.Sequential(
        [
            keras.Input((12,)),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )

    @tf.function
    def score(features):
        x = tf.reshape(tf.stack(features), (1, -1))
        return model(x, training=False)[0, 0]

    rng = np.random.default_rng(14)
    s = SimpleNamespace(score=score, rng=rng)
    score(tf.constant(rng.random(12).astype("float32")))
    return s


def _requests(s):
    # What arrives from the JSON body: plain Python floats, new values each time.
    return [[float(v) for v in s.rng.random(12)] for _ in range(REQUESTS)]


def slow(s):
    return [float(s.score(req)) for req in _requests(s)]


def fast(s):
    import tensorflow as tf

    return [float(s.score(tf.constant(req, tf.float32))) for req in _requests(s)]
