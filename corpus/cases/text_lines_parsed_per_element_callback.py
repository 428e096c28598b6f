"""Keras 3 `fit` on a text file of space-separated features read with `TextLineDataset`
(after its header line; the dataset's length is unknown, so the epoch ends when it runs
out), each line split and parsed by its own `map` call before `batch`; diagnosed with
`ProfileCallback` added to the `fit`."""

import os
import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="text-lines-parsed-per-element-callback",
    title="fit on my text features is slow, and the model is two dense layers",
    source="https://www.tensorflow.org/guide/data_performance#vectorizing_mapping "
    "(batch before map, then map a vectorized function); the Keras 3 epoch iterator ends "
    "an epoch of unknown length on the dataset's OutOfRangeError",
    mechanism=(
        "TextLineDataset(path).skip(1).map(parse).batch(512): parse runs tf.strings.split "
        "and tf.strings.to_number on one line per call, 32768 calls per epoch on one "
        "tf.data thread, while the step waits; the dataset has no known length, so Keras "
        "ends the epoch on its OutOfRangeError. Batching first and parsing whole batches "
        "(tf.strings.split on the batch, .to_tensor()) is the fix"
    ),
    expect="input-bound",
    fix_mentions=("batch first", "ds.batch(n).map(f)"),
    premise=6,
    iterations=6,
)

LINES, FEATURES, BATCH = 32768, 24, 512


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(91)
    rng = np.random.default_rng(91)
    values = rng.standard_normal((LINES, FEATURES + 1)).round(3)
    path = os.path.join(tempfile.mkdtemp(prefix="tfdiag-corpus-lines-"), "features.txt")
    with open(path, "w") as f:
        f.write(" ".join(f"f{i}" for i in range(FEATURES)) + " target\n")
        f.writelines(" ".join(f"{v:.3f}" for v in row) + "\n" for row in values)
    lines = tf.data.TextLineDataset(path).skip(1)  # the header

    def parse_line(line):
        v = tf.strings.to_number(tf.strings.split(line))
        return v[:FEATURES], v[FEATURES:]

    def parse_batch(batch):
        v = tf.strings.to_number(tf.strings.split(batch).to_tensor(default_value="0"))
        return v[:, :FEATURES], v[:, FEATURES:]

    slow_ds = lines.map(parse_line).batch(BATCH)
    fast_ds = lines.batch(BATCH).map(parse_batch).prefetch(tf.data.AUTOTUNE)

    def build():
        m = keras.Sequential(
            [
                keras.Input((FEATURES,)),
                keras.layers.Dense(32, activation="relu"),
                keras.layers.Dense(1),
            ]
        )
        m.compile("adam", "mse")
        return m

    model, fixed = build(), build()
    fixed.set_weights(model.get_weights())
    s = SimpleNamespace(model=model, fixed=fixed, slow_ds=slow_ds, fast_ds=fast_ds)
    slow(s)
    fast(s)
    return s


def slow(s, callbacks=None):
    return s.model.fit(s.slow_ds, epochs=1, verbose=0, callbacks=callbacks)


def fast(s):
    # The fix: batch first, then parse the whole batch in one vectorized map.
    return s.fixed.fit(s.fast_ds, epochs=1, verbose=0)


def diagnose(s, iterations):
    import tfdiag

    cb = tfdiag.keras.ProfileCallback(batches=(3, 3 + iterations))
    slow(s, callbacks=[cb])
    return cb.report
