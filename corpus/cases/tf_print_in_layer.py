"""Keras 3 `fit` of a model with a debugging layer left in: it `tf.print`s its whole
activation tensor (`summarize=-1`) to a log file on every step."""

import os
import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="tf-print-in-layer",
    title="training got much slower after I added a print to look at the activations",
    source="tensorflow/tensorflow#35873 (print statements in the training loop make it "
    "much slower); tensorflow/tpu#797 (one print line slows training); "
    "https://www.tensorflow.org/api_docs/python/tf/print (summarize=-1 prints every "
    "element)",
    mechanism=(
        "Inspect.call runs tf.print(x, summarize=-1, output_stream='file://...') on the "
        "(64, 256) activations inside the compiled step: every step formats 16384 floats "
        "as text and appends them to the log, which costs more than the model; printing "
        "a summary (summarize=3, a mean) or every N steps (tf.cond) is the fix"
    ),
    expect="compute-bound",
    fix_mentions=("tf.print",),
    premise=3.0,  # 2.1-5.0x across runs on the loaded 2-core box (2026-12-02)
    iterations=3,
)

N, BATCH = 1024, 64


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(87)
    log = os.path.join(tempfile.mkdtemp(prefix="tfdiag-corpus-print-"), "activations.log")

    class Inspect(keras.layers.Layer):
        def __init__(self, full, **kwargs):
            super().__init__(**kwargs)
            self.full = full

        def call(self, x):
            if self.full:
                tf.print("activations", x, summarize=-1, output_stream="file://" + log)
            else:
                tf.print("activations mean", tf.reduce_mean(x), output_stream="file://" + log)
            return x

    def build(full):
        m = keras.Sequential(
            [
                keras.Input((64,)),
                keras.layers.Dense(256, activation="relu"),
                Inspect(full),
                keras.layers.Dense(10),
            ]
        )
        m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return m

    model, fixed = build(True), build(False)
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(87)
    x = rng.standard_normal((N, 64)).astype("float32")
    y = rng.integers(0, 10, (N,)).astype("int32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).prefetch(tf.data.AUTOTUNE)
    s = SimpleNamespace(model=model, fixed=fixed, ds=ds, log=log)
    slow(s)
    fast(s)
    return s


def slow(s):
    out = s.model.fit(s.ds, epochs=1, verbose=0)
    open(s.log, "w").close()  # keep the log from growing without bound
    return out


def fast(s):
    # The fix: print a summary of the activations, not all of them.
    out = s.fixed.fit(s.ds, epochs=1, verbose=0)
    open(s.log, "w").close()
    return out


def target(s):
    return s.model.fit, (s.ds,), {"epochs": 1, "verbose": 0}
