"""A serving function defines its `@tf.function` inside itself: a new function every call."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="tf-function-per-call",
    title="I wrapped inference in tf.function but each request got slower, not faster",
    source="tensorflow/tensorflow#46012; tf.function retracing warning cause (1): 'creating "
    "@tf.function repeatedly in a loop'; tensorflow/tensorflow PR#32258",
    mechanism=(
        "serve(x) defines @tf.function def infer inside its body, so every request makes a new "
        "tf.function object with an empty cache and traces the model from scratch"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("once", "outside"),
    premise=22,
    iterations=5,
    also=("per-iteration-tracing",),
)

REQUESTS = 3


def setup():
    import keras

    keras.utils.set_random_seed(15)
    model = keras.Sequential(
        [
            keras.Input((20,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(5, activation="softmax"),
        ]
    )
    rng = np.random.default_rng(15)
    xs = rng.standard_normal((REQUESTS, 8, 20)).astype("float32")
    s = SimpleNamespace(model=model, xs=xs, infer=make_infer(model))
    fast(s)
    return s


def make_infer(model):
    import tensorflow as tf

    @tf.function
    def infer(a):
        return model(a, training=False)

    return infer


def serve(model, x):
    """The user's request handler."""
    import tensorflow as tf

    @tf.function
    def infer(a):
        return model(a, training=False)

    return infer(x).numpy()


def slow(s):
    return [serve(s.model, x) for x in s.xs]


def fast(s):
    return [s.infer(x).numpy() for x in s.xs]


def target(s):
    def handle_requests(model, xs):
        return [serve(model, x) for x in xs]

    return handle_requests, (s.model, s.xs), {}
