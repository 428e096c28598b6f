"""Custom loop: a compiled `tf.function` train step called once per single-sample batch."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="custom-loop-tiny-batches",
    title="my tf.function train step is compiled but the epoch is still slow with batch 1",
    source="keras-team/keras PR#20451 (several steps per tf.function call, x2 at batch 1); "
    "tensorflow/docs gpu_performance_analysis.md (tf.while_loop for small steps); "
    "tensorflow/tensorflow#48844",
    mechanism=(
        "for x, y in ds.batch(1): loss += float(train_step(x, y)) - 256 Python-side "
        "tf.function calls, eager iterator get_nexts and loss reads per epoch, for a linear "
        "model whose step is a handful of ops"
    ),
    expect="per-step-overhead",
    fix_mentions=(
        "tf.while_loop",
        "tf.range",
        "several steps",
        "batch_size",
        "steps_per_execution",
    ),
    premise=2.9,
    iterations=3,
)

N = 256


def setup():
    import tensorflow as tf

    rng = np.random.default_rng(11)
    x = rng.standard_normal((N, 8)).astype("float32")
    y = (x @ rng.standard_normal((8, 1)) + 0.1).astype("float32")
    w = tf.Variable(tf.zeros((8, 1)))
    b = tf.Variable(tf.zeros((1,)))
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(1)

    def step_body(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(xb @ w + b - yb))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.01 * gw)
        b.assign_sub(0.01 * gb)
        return loss

    train_step = tf.function(step_body)

    @tf.function
    def train_epoch(dataset):
        # The fix: the loop over batches runs inside one graph (autograph: a while loop).
        total = tf.constant(0.0)
        for xb, yb in dataset:
            total += step_body(xb, yb)
        return total

    s = SimpleNamespace(ds=ds, train_step=train_step, train_epoch=train_epoch)
    slow(s)
    fast(s)
    return s


def slow(s):
    total = 0.0
    for xb, yb in s.ds:
        total += float(s.train_step(xb, yb))
    return total


def fast(s):
    return float(s.train_epoch(s.ds))
