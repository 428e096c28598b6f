"""A custom training loop, its epoch compiled as one `tf.function`, that counts the dataset's
batches at the start of every epoch, by reading the whole dataset once more from Python, to
size its learning-rate schedule."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="count-batches-every-epoch",
    title="counting my dataset's batches takes as long as training on them",
    source="tensorflow/tensorflow#26966 and #33425 (len(dataset) / counting a tf.data "
    "dataset by iterating it); TF API docs for tf.data.Dataset.cardinality",
    mechanism=(
        "run_epoch() computes num_batches = sum(1 for _ in train_ds) before training: the "
        "pipeline runs once more, 512 batches read one by one from Python, every epoch, for "
        "a number tf.data knows without reading anything (train_ds.cardinality()) and that "
        "never changes; the epoch itself is one tf.function over the dataset"
    ),
    expect="input-bound",
    fix_mentions=("cardinality",),
    premise=2.5,  # 2.8-2.9x measured (--rounds 3, 2026-12-04, two runs)
    iterations=3,
)

N, BATCH, FEATURES = 4096, 8, 16


def setup():
    import tensorflow as tf

    rng = np.random.default_rng(7)
    x = rng.standard_normal((N, FEATURES)).astype("float32")
    y = (x @ rng.standard_normal((FEATURES, 1)) + 0.1).astype("float32")

    def scale(xb, yb):
        return (xb - 0.5) * 2.0, yb

    train_ds = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .shuffle(N)
        .batch(BATCH)
        .map(scale, num_parallel_calls=tf.data.AUTOTUNE)
        .prefetch(tf.data.AUTOTUNE)
    )
    w = tf.Variable(tf.zeros((FEATURES, 1)))
    b = tf.Variable(tf.zeros((1,)))

    @tf.function
    def train_epoch(ds, num_batches):
        # A linear learning-rate decay over the epoch's batches, in one graph.
        step = tf.constant(0.0)
        total = tf.constant(0.0)
        for xb, yb in ds:
            lr = 0.01 * (1.0 - step / num_batches)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(xb @ w + b - yb))
            gw, gb = tape.gradient(loss, [w, b])
            w.assign_sub(lr * gw)
            b.assign_sub(lr * gb)
            total += loss
            step += 1.0
        return total / step

    s = SimpleNamespace(train_ds=train_ds, train_epoch=train_epoch, tf=tf)
    slow(s)
    fast(s)
    return s


def run_epoch(s):
    """The user's epoch: count the batches, then train with a schedule over them."""
    train_ds = s.train_ds
    num_batches = sum(1 for _ in train_ds)
    return float(s.train_epoch(train_ds, s.tf.constant(float(num_batches))))


def slow(s):
    return run_epoch(s)


def fast(s):
    # The fix: tf.data knows the length (from_tensor_slices + batch); nothing is read for it.
    num_batches = s.train_ds.cardinality()
    return float(s.train_epoch(s.train_ds, s.tf.cast(num_batches, s.tf.float32)))


def target(s):
    return run_epoch, (s,), {}
