"""A custom training loop that takes each batch with `next(iter(ds))`: a new iterator, and a
refilled shuffle buffer, on every step."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="iterator-per-step",
    title="my training loop spends most of its time getting the next batch",
    source="tensorflow/tensorflow#29377 and #35967 (`next(iter(dataset))` in a loop re-creates "
    "the iterator and refills the shuffle buffer every time); tf.data guide: iterators",
    mechanism=(
        "step() calls next(iter(ds)) on a dataset with shuffle(4096): each call creates an "
        "iterator, which fills a 4096-element shuffle buffer to hand out one batch; one "
        "iterator made once and next(it) per step reads one batch"
    ),
    expect="input-bound",
    fix_mentions=("iter(ds)` outside",),
    premise=5.0,
    iterations=10,
)


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(4)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8192, 32)).astype("float32")
    y = rng.standard_normal((8192, 1)).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096).batch(32).repeat()
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64), keras.layers.Dense(1)])
    opt = keras.optimizers.SGD(0.01)

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    s = SimpleNamespace(ds=ds, train_step=train_step, it=iter(ds))
    fast(s)
    slow(s)
    return s


def slow(s):
    xb, yb = next(iter(s.ds))
    return s.train_step(xb, yb)


def fast(s):
    xb, yb = next(s.it)
    return s.train_step(xb, yb)
