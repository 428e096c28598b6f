"""Keras 3 model trained with a hand-written `GradientTape` loop without `tf.function`,
profiled with `python -m cProfile -o`-style `cProfile` and read back with `load_report`."""

import cProfile
import os
import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="prof-file-eager-tape",
    title="my .prof shows thousands of TFE_Py_FastPathExecute calls; is that normal?",
    source="tensorflow/tensorflow#31938 (custom loop >10x slower than fit); "
    "tensorflow/tensorflow#48732; tensorflow/docs PR#871",
    mechanism=(
        "train_epoch() runs forward, loss, tape.gradient and Adam's update eagerly for each "
        "of 6 batches: one Python dispatch per op of a 4-layer MLP"
    ),
    expect="eager-execution",
    fix_mentions=("tf.function",),
    premise=16,
    iterations=4,
)

BATCHES = 6


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(43)

    def build():
        return keras.Sequential(
            [keras.Input((32,))]
            + [keras.layers.Dense(48, activation="relu") for _ in range(3)]
            + [keras.layers.Dense(1)]
        )

    def make_step(model):
        opt = keras.optimizers.Adam(1e-3)

        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        return step

    m1, m2 = build(), build()
    m2.set_weights(m1.get_weights())
    rng = np.random.default_rng(43)
    xs = tf.constant(rng.standard_normal((BATCHES, 64, 32)).astype("float32"))
    ys = tf.constant(rng.standard_normal((BATCHES, 64, 1)).astype("float32"))
    s = SimpleNamespace(xs=xs, ys=ys, step=make_step(m1), graph_step=tf.function(make_step(m2)))
    slow(s)
    fast(s)
    return s


def train_epoch(step, xs, ys):
    return [float(step(xs[i], ys[i])) for i in range(BATCHES)]


def slow(s):
    return train_epoch(s.step, s.xs, s.ys)


def fast(s):
    return train_epoch(s.graph_step, s.xs, s.ys)


def diagnose(s, iterations):
    import tfdiag

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(iterations):
        train_epoch(s.step, s.xs, s.ys)
    prof.disable()
    path = os.path.join(tempfile.mkdtemp(prefix="tfdiag-corpus-prof-"), "train.prof")
    prof.dump_stats(path)
    return tfdiag.load_report(path, iterations=iterations)
