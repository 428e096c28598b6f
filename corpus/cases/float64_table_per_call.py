"""A recommender's inference function converts its float64 NumPy embedding table to a tensor
and casts it to float32 on every call, then gathers a few rows and scores them."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="float64-table-per-call",
    title="inference takes tens of milliseconds for a gather of 64 rows",
    source="tensorflow/tensorflow#27692 and #40136 (tf.convert_to_tensor of a large NumPy "
    "array on every call); TF guide 'Better performance with tf.function' (keep constants "
    "as tensors); issue 31's held-out float64 table",
    mechanism=(
        "infer() calls tf.convert_to_tensor on a 200,000 x 64 float64 table (100 MB) and "
        "tf.cast to float32 on every request: the whole table is copied into a tensor and "
        "converted, for a gather of 64 rows and a small scorer that take about a millisecond"
    ),
    expect="conversion-overhead",
    fix_mentions=("once",),
    premise=30,  # 48.7x measured (--rounds 3, 2026-12-04): the fix is a 0.6 ms call
    iterations=4,
)

ROWS, DIM, IDS = 200_000, 64, 64


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(4)
    rng = np.random.default_rng(4)
    table = rng.standard_normal((ROWS, DIM))  # float64, as np.load gave it
    ids = tf.constant(rng.integers(0, ROWS, IDS).astype("int32"))
    scorer = keras.Sequential(
        [keras.Input((DIM,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)]
    )
    score = tf.function(lambda e: scorer(e, training=False))
    s = SimpleNamespace(
        table=table, ids=ids, score=score, table32=tf.constant(table, tf.float32), tf=tf
    )
    slow(s)
    fast(s)
    return s


def infer(table, ids, score):
    """The user's inference: the table as a float32 tensor, then gather and score."""
    import tensorflow as tf

    emb = tf.cast(tf.convert_to_tensor(table), tf.float32)
    return score(tf.gather(emb, ids)).numpy()


def slow(s):
    return infer(s.table, s.ids, s.score)


def fast(s):
    # The fix: the table is converted and cast once at start-up (setup).
    return s.score(s.tf.gather(s.table32, s.ids)).numpy()


def target(s):
    return infer, (s.table, s.ids, s.score), {}
