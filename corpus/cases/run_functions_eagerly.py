"""`tf.config.run_functions_eagerly(True)` left on from a debugging session."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="run-functions-eagerly",
    title="my @tf.function train step is as slow as plain eager code",
    source="tensorflow/tensorflow#27472; USGS-R/river-dl PR#109; tf.config."
    "run_functions_eagerly docs ('for debugging ... will not be as fast')",
    mechanism=(
        "tf.config.run_functions_eagerly(True) is still set from debugging, so the "
        "@tf.function train step runs its Python body eagerly on every call: no graph"
    ),
    expect="eager-execution",
    fix_mentions=("run_functions_eagerly",),
    premise=17,
    iterations=5,
)

BATCHES = 8


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(22)
    model = keras.Sequential(
        [keras.Input((20,))]
        + [keras.layers.Dense(64, activation="relu") for _ in range(3)]
        + [keras.layers.Dense(1)]
    )
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    rng = np.random.default_rng(22)
    xs = tf.constant(rng.standard_normal((BATCHES, 32, 20)).astype("float32"))
    ys = tf.constant(rng.standard_normal((BATCHES, 32, 1)).astype("float32"))
    s = SimpleNamespace(train_step=train_step, xs=xs, ys=ys)
    fast(s)
    slow(s)
    return s


def _epoch(s):
    return [float(s.train_step(s.xs[i], s.ys[i])) for i in range(BATCHES)]


def slow(s):
    import tensorflow as tf

    # The user's script set this at the top while debugging; the case turns it off again
    # on the way out so that the other cases in the process are unaffected.
    tf.config.run_functions_eagerly(True)
    try:
        return _epoch(s)
    finally:
        tf.config.run_functions_eagerly(False)


def fast(s):
    return _epoch(s)
