"""A `tf.function` encoder gets batches of variable sequence length: one trace per length."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="retrace-new-shape",
    title="tf.function creates a new graph every time my input length changes",
    source="tensorflow/tensorflow#33434 (solved with input_signature); tensorflow/tensorflow#38561 "
    "(experimental_relax_shapes workaround); tensorflow/tensorflow#49151",
    mechanism=(
        "encode(tokens) is a plain @tf.function: each batch is padded to its own longest "
        "sentence, so each new length is a new input shape and a new trace of the model"
    ),
    expect="per-iteration-tracing",
    fix_mentions=("reduce_retracing", "input_signature"),
    premise=20,
    iterations=5,
)

BATCHES = 3  # one slow() = three batches, each with a length not seen before


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(13)
    model = keras.Sequential(
        [
            keras.Input((None,), dtype="int32"),
            keras.layers.Embedding(1000, 32),
            keras.layers.Conv1D(32, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(8),
        ]
    )

    @tf.function
    def encode(tokens):
        return model(tokens, training=False)

    @tf.function(reduce_retracing=True)
    def encode_fixed(tokens):
        return model(tokens, training=False)

    rng = np.random.default_rng(13)
    s = SimpleNamespace(encode=encode, encode_fixed=encode_fixed, rng=rng, n=0)
    s.pool = rng.integers(1, 1000, size=(16, 2048)).astype("int32")
    fast(s)
    fast(s)
    return s


def _batches(s):
    out = []
    for _ in range(BATCHES):
        s.n += 1
        length = 16 + s.n % 2000  # every call sees a new padded length
        out.append(s.pool[:, :length])
    return out


def slow(s):
    return [s.encode(b) for b in _batches(s)]


def fast(s):
    return [s.encode_fixed(b) for b in _batches(s)]
