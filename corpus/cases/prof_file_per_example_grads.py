"""Per-example gradients (clipped and averaged, DP-SGD style) computed with one
`GradientTape` per example in a Python loop, eagerly; profiled by the user with
`cProfile` and read back with `load_report`."""

import cProfile
import os
import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="prof-file-per-example-grads",
    title="computing per-example gradients takes forever; cProfile shows only TF internals",
    source="tensorflow/tensorflow#36227 (jacobian without pfor: one gradient per output, "
    "as slow as expected; pfor vectorises it); tensorflow/probability#614 "
    "(tf.vectorized_map over a per-example gradient); tensorflow/privacy "
    "(vectorized per-example gradients)",
    mechanism=(
        "for each of 32 examples, a new tape records the model on a (1, 20) slice and "
        "tape.gradient walks it back, all eager: 32 forward and backward passes "
        "dispatched op by op; the fix is a tf.function built once around tape.jacobian "
        "of the 32 per-example losses (pfor-vectorised). Measured here: eager jacobian "
        "alone 1.0x, the loop itself in a tf.function ~120x, the jacobian in one ~160x: "
        "the graph is the lever, vectorising adds ~1.3x"
    ),
    expect="eager-execution",
    fix_mentions=("tf.function",),
    premise=80,
    iterations=3,
)

BATCH, CLIP = 32, 1.0


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(80)
    model = keras.Sequential(
        [
            keras.Input((20,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    rng = np.random.default_rng(80)
    x = tf.constant(rng.standard_normal((BATCH, 20)).astype("float32"))
    y = tf.constant(rng.standard_normal((BATCH, 1)).astype("float32"))
    s = SimpleNamespace(model=model, x=x, y=y, tf=tf)
    s.graph_jacobian = tf.function(lambda: vectorized_gradients(s))
    slow(s)
    fast(s)
    return s


def clip_and_average(tf, per_example):
    # per_example: one list of gradients per example.
    clipped = [tf.clip_by_global_norm(g, CLIP)[0] for g in per_example]
    return [tf.add_n(list(gs)) / len(per_example) for gs in zip(*clipped)]


def per_example_gradients(s):
    tf, model = s.tf, s.model
    grads = []
    for i in range(BATCH):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(s.x[i : i + 1]) - s.y[i : i + 1]))
        grads.append(tape.gradient(loss, model.trainable_variables))
    return clip_and_average(tf, grads)


def slow(s):
    return per_example_gradients(s)


def fast(s):
    # The fix: one tape, the jacobian of the per-example losses (vectorised with pfor),
    # in a tf.function built once.
    return s.graph_jacobian()


def vectorized_gradients(s):
    tf, model = s.tf, s.model
    with tf.GradientTape() as tape:
        losses = tf.reduce_mean(tf.square(model(s.x) - s.y), axis=1)
    jac = tape.jacobian(losses, model.trainable_variables)
    norms = tf.sqrt(sum(tf.reduce_sum(tf.reshape(j, [BATCH, -1]) ** 2, axis=1) for j in jac))
    scale = tf.minimum(1.0, CLIP / norms)
    return [
        tf.reduce_mean(j * tf.reshape(scale, [-1] + [1] * (len(j.shape) - 1)), axis=0) for j in jac
    ]


def diagnose(s, iterations):
    import tfdiag

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(iterations):
        per_example_gradients(s)
    prof.disable()
    path = os.path.join(tempfile.mkdtemp(prefix="tfdiag-corpus-prof-"), "grads.prof")
    prof.dump_stats(path)
    return tfdiag.load_report(path, iterations=iterations)
