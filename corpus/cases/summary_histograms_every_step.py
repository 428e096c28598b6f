"""A custom training loop whose `tf.function` step is fast, and which writes a `tf.summary`
histogram of every weight and gradient from Python after every step."""

import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="summary-histograms-every-step",
    title="my training loop got many times slower when I added TensorBoard histograms",
    source="tensorflow/tensorboard#2016 and tensorflow/tensorflow#27765 (histogram summaries "
    "every step dominate training time); TF guide: tf.summary, record every N steps",
    mechanism=(
        "after each compiled train step the loop writes tf.summary.histogram for 6 variables "
        "and their gradients eagerly: hundreds of small ops dispatched one by one from Python "
        "per step, beside one graph call; writing them every 50 steps does the same training"
    ),
    expect="eager-execution",
    fix_mentions=("less often", "every N steps"),
    premise=3.0,
    iterations=3,
)

STEPS = 4


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(8)
    model = keras.Sequential(
        [
            keras.Input((16,)),
            *[keras.layers.Dense(32, activation="relu") for _ in range(2)],
            keras.layers.Dense(1),
        ]
    )
    opt = keras.optimizers.SGD(0.01)
    rng = np.random.default_rng(8)
    x = tf.constant(rng.standard_normal((64, 16)).astype("float32"))
    y = tf.constant(rng.standard_normal((64, 1)).astype("float32"))

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    writer = tf.summary.create_file_writer(tempfile.mkdtemp(prefix="tfdiag-summ-"))
    s = SimpleNamespace(model=model, x=x, y=y, step=train_step, writer=writer, n=0, tf=tf)
    slow(s)
    return s


def _epoch(s, every):
    with s.writer.as_default():
        for _ in range(STEPS):
            s.n += 1
            loss, grads = s.step(s.x, s.y)
            if s.n % every == 0:
                for v, g in zip(s.model.trainable_variables, grads):
                    s.tf.summary.histogram(v.path, v, step=s.n)
                    s.tf.summary.histogram(v.path + "/grad", g, step=s.n)


def slow(s):
    _epoch(s, 1)


def fast(s):
    _epoch(s, 50)
