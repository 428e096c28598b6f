"""tf_keras: a hand-written loop calls `train_on_batch` on every small batch."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="train-on-batch-tf-keras",
    title="train_on_batch in my loop is slower than a custom training step",
    source="tensorflow/tensorflow#46126 (WindQAQ: train_on_batch 'introduces incredible "
    "overhead', custom loop almost doubles speed); tensorflow/tensorflow#48844",
    mechanism=(
        "tf_keras train_on_batch wraps every batch in a single-batch data iterator "
        "(data_adapter.single_batch_iterator: a tf.data dataset from the arrays), resets and "
        "reads metrics and converts logs each call; the 8->16->1 step itself is microseconds"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("tf.function",),
    premise=4.8,
    iterations=5,
    also=("per-iteration-tracing",),
)

BATCHES = 16


def setup():
    import tensorflow as tf
    import tf_keras as keras

    keras.utils.set_random_seed(5)
    model = keras.Sequential(
        [keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)]
    )
    opt = keras.optimizers.SGD(0.01)
    model.compile(opt, "mse")
    rng = np.random.default_rng(5)
    xs = rng.standard_normal((BATCHES, 16, 8)).astype("float32")
    ys = rng.standard_normal((BATCHES, 16, 1)).astype("float32")
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    xt, yt = tf.constant(xs), tf.constant(ys)
    s = SimpleNamespace(model=model, xs=xs, ys=ys, xt=xt, yt=yt, train_step=train_step)
    slow(s)
    fast(s)
    return s


def slow(s):
    return [s.model.train_on_batch(x, y) for x, y in zip(s.xs, s.ys)]


def fast(s):
    return [s.train_step(s.xt[i], s.yt[i]) for i in range(BATCHES)]
