"""A `tf.function` train step takes the step number as a Python int: one trace per step."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="retrace-python-scalar",
    title="WARNING: 5 out of the last 5 calls to train_step triggered tf.function retracing",
    source="tensorflow/tensorflow#32157 and PR#32258 (the retracing warning: 'many users are "
    "hitting this'); tf.function guide (Python scalars are part of the trace key)",
    mechanism=(
        "train_step(x, y, step) with step a Python int for a learning-rate schedule: every new "
        "value is a new cache key, so every call traces the model, the gradient and the update"
    ),
    expect="per-iteration-tracing",
    fix_mentions=("tf.constant", "input_signature"),
    premise=44,
    iterations=5,
)

STEPS = 2  # one slow() = two training steps


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(12)

    def build():
        return keras.Sequential(
            [keras.Input((8,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
        )

    def make_step(model):
        opt = keras.optimizers.SGD(0.05)

        @tf.function
        def train_step(x, y, step):
            lr = 0.05 / (1.0 + 0.001 * tf.cast(step, tf.float32))
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.learning_rate.assign(lr)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        return train_step

    rng = np.random.default_rng(12)
    x = tf.constant(rng.standard_normal((64, 8)).astype("float32"))
    y = tf.constant(rng.standard_normal((64, 1)).astype("float32"))
    slow_model, fast_model = build(), build()
    fast_model.set_weights(slow_model.get_weights())
    s = SimpleNamespace(x=x, y=y, slow_step=make_step(slow_model), fast_step=make_step(fast_model))
    s.slow_count = s.fast_count = 0
    slow(s)
    fast(s)
    return s


def slow(s):
    out = []
    for _ in range(STEPS):
        s.slow_count += 1
        out.append(s.slow_step(s.x, s.y, s.slow_count))  # a Python int: retraces
    return out


def fast(s):
    import tensorflow as tf

    out = []
    for _ in range(STEPS):
        s.fast_count += 1
        out.append(s.fast_step(s.x, s.y, tf.constant(s.fast_count)))
    return out
