"""A `tf.function` with an `input_signature` called on nested Python lists every batch."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="python-list-inputs",
    title="my compiled scoring function is fast on tensors but slow on my data",
    source="tensorflow/tensorflow#5516 (yaroslavvb: fixed cost per Python/C++ crossing); "
    "tensorflow/tensorflow#59744; tf.function guide (convert inputs to tensors)",
    mechanism=(
        "the rows are kept as lists of Python floats (read from JSON); each call to the "
        "signature-pinned tf.function converts a 256x32 nested list element by element into "
        "a tensor, which costs far more than the 32->16->1 model"
    ),
    expect="conversion-overhead",
    fix_mentions=("convert_to_tensor", "np.asarray", "tf.constant", "float32"),
    premise=3.6,
    iterations=10,
)

CHUNKS, ROWS, FEATURES = 6, 256, 32


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(37)
    model = keras.Sequential(
        [keras.Input((FEATURES,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)]
    )

    @tf.function(input_signature=[tf.TensorSpec([None, FEATURES], tf.float32)])
    def score(x):
        return model(x, training=False)

    rng = np.random.default_rng(37)
    rows = rng.random((CHUNKS * ROWS, FEATURES)).round(6).tolist()  # list of lists of floats
    chunks = [rows[i * ROWS : (i + 1) * ROWS] for i in range(CHUNKS)]
    tensors = [tf.constant(c, tf.float32) for c in chunks]  # the fix: convert once
    s = SimpleNamespace(score=score, chunks=chunks, tensors=tensors)
    slow(s)
    fast(s)
    return s


def score_all(score, chunks):
    return [score(c).numpy() for c in chunks]


def slow(s):
    return score_all(s.score, s.chunks)


def fast(s):
    return score_all(s.score, s.tensors)


def target(s):
    return score_all, (s.score, s.chunks), {}
