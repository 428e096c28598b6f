"""Keras 3 `fit` of a sequence tagger whose loss weights each sample by its edit distance,
computed in Python through `tf.numpy_function` (an MWER-style loss)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="numpy-function-in-loss",
    title="adding an edit-distance term to my loss made training several times slower",
    source="tensorflow/tensorflow#37488 (numpy_function in the step much slower); "
    "tensorflow/docs profiler.md ('limit the usage of tf.py_function'); "
    "tensorflow/tensorflow#15694 (py_func holds the GIL)",
    mechanism=(
        "the loss calls tf.numpy_function(edit_distances, [y_true, argmax(y_pred)]) inside the "
        "compiled train step: every step leaves the graph and runs a pure-Python Levenshtein "
        "over 32 sequences of 24 tokens under the GIL; tf.edit_distance does it in the graph"
    ),
    expect="python-in-graph",
    fix_mentions=("numpy_function", "tf.edit_distance"),
    premise=2.4,
    iterations=3,
)

N, T, VOCAB, BATCH = 512, 24, 8, 32


def _levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def edit_distances(truth, hyp):
    """The user's helper: normalised edit distance per sample, in Python."""
    return np.array(
        [_levenshtein(list(h), list(t)) / len(t) for t, h in zip(truth, hyp)], dtype="float32"
    )


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(31)
    rng = np.random.default_rng(31)
    x = rng.standard_normal((N, T, 12)).astype("float32")
    y = rng.integers(1, VOCAB, (N, T)).astype("int32")  # tokens 1..7: no 0 padding
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)

    def mwer_loss(y_true, y_pred):
        hyp = tf.argmax(y_pred, axis=-1, output_type=tf.int32)
        d = tf.numpy_function(edit_distances, [tf.cast(y_true, tf.int32), hyp], tf.float32)
        d = tf.reshape(d, (-1,))
        return tf.reduce_mean((1.0 + d) * tf.reduce_mean(ce(y_true, y_pred), axis=-1))

    def mwer_loss_tf(y_true, y_pred):
        hyp = tf.argmax(y_pred, axis=-1, output_type=tf.int32)
        truth = tf.cast(y_true, tf.int32)
        # +1 on both sides: from_dense drops zeros, and argmax may predict token 0.
        d = tf.edit_distance(
            tf.sparse.from_dense(hyp + 1), tf.sparse.from_dense(truth + 1), normalize=True
        )
        return tf.reduce_mean((1.0 + d) * tf.reduce_mean(ce(y_true, y_pred), axis=-1))

    def build(loss):
        m = keras.Sequential(
            [
                keras.Input((T, 12)),
                keras.layers.Conv1D(32, 3, padding="same", activation="relu"),
                keras.layers.Dense(VOCAB),
            ]
        )
        m.compile(keras.optimizers.Adam(1e-3), loss)
        return m

    model, fixed = build(mwer_loss), build(mwer_loss_tf)
    fixed.set_weights(model.get_weights())
    model.fit(x[:64], y[:64], batch_size=BATCH, verbose=0)
    fixed.fit(x[:64], y[:64], batch_size=BATCH, verbose=0)
    return SimpleNamespace(model=model, fixed=fixed, x=x, y=y)


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)


def fast(s):
    return s.fixed.fit(s.x, s.y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
