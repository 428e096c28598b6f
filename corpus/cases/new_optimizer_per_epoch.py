"""A custom training loop that changes the learning rate each epoch by making a new
optimizer, and so a new `tf.function` train step (the old one cannot create the new
optimizer's variables)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="new-optimizer-per-epoch",
    title="my custom loop decays the learning rate per epoch and every epoch starts slowly",
    source="tensorflow/tensorflow#34316 (tf.function after replacing the optimiser); "
    "tensorflow/tensorflow#27120 (tf.function tried to create variables on non-first "
    "call); tensorflow/tensorflow#37862 (a LearningRateSchedule for a GradientTape loop)",
    mechanism=(
        "each epoch builds Adam(lr) and tf.function(train_step) anew: the step is traced "
        "again (and the optimizer's slots built) for 4 batches of work; one optimizer "
        "whose learning_rate is assigned (or a LearningRateSchedule) and one traced "
        "step are the fix"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("learning_rate", "LearningRateSchedule"),
    premise=60,
    iterations=4,
)

BATCHES, BATCH = 4, 64


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(81)

    def build():
        return keras.Sequential(
            [
                keras.Input((32,)),
                keras.layers.Dense(64, activation="relu"),
                keras.layers.Dense(64, activation="relu"),
                keras.layers.Dense(1),
            ]
        )

    def make_train_step(model, optimizer):
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        return train_step

    model, fixed = build(), build()
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(81)
    xs = tf.constant(rng.standard_normal((BATCHES, BATCH, 32)).astype("float32"))
    ys = tf.constant(rng.standard_normal((BATCHES, BATCH, 1)).astype("float32"))
    fixed_opt = keras.optimizers.Adam(1e-3)
    s = SimpleNamespace(
        model=model,
        xs=xs,
        ys=ys,
        epoch=0,
        make_train_step=make_train_step,
        keras=keras,
        tf=tf,
        fixed_opt=fixed_opt,
        fixed_step=tf.function(make_train_step(fixed, fixed_opt)),
    )
    slow(s)
    fast(s)
    return s


def lr_for(epoch):
    return 1e-3 * 0.9**epoch


def slow(s):
    s.epoch += 1
    optimizer = s.keras.optimizers.Adam(learning_rate=lr_for(s.epoch))
    train_step = s.tf.function(s.make_train_step(s.model, optimizer))
    return [float(train_step(s.xs[i], s.ys[i])) for i in range(BATCHES)]


def fast(s):
    # The fix: one optimizer and one traced step; assign the new learning rate.
    s.epoch += 1
    s.fixed_opt.learning_rate = lr_for(s.epoch)
    return [float(s.fixed_step(s.xs[i], s.ys[i])) for i in range(BATCHES)]
