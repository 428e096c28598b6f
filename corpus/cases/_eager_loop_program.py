"""One program for two cases (``eager-loop-*``): a hand-written `GradientTape` training loop
with no `tf.function` (TensorFlow's custom-training walkthrough, synthetic data), diagnosed
with `tfdiag.profile` on one epoch and with `tfdiag run` on the script. Run as a script it
trains for ``EPOCHS`` epochs (``python -m tfdiag run corpus/cases/_eager_loop_program.py``).
"""

from types import SimpleNamespace

import numpy as np

BATCHES, BATCH, FEATURES = 8, 32, 16
EPOCHS = 4


def build():
    import keras

    return keras.Sequential(
        [keras.Input((FEATURES,))]
        + [keras.layers.Dense(32, activation="relu") for _ in range(3)]
        + [keras.layers.Dense(3)]
    )


def make_step(model):
    import keras
    import tensorflow as tf

    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return train_step


def setup(warm=True):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(67)
    rng = np.random.default_rng(67)
    xs = rng.standard_normal((BATCHES, BATCH, FEATURES)).astype("float32")
    ys = rng.integers(0, 3, (BATCHES, BATCH)).astype("int32")
    m1, m2 = build(), build()
    m2.set_weights(m1.get_weights())
    s = SimpleNamespace(xs=xs, ys=ys, step=make_step(m1), graph_step=tf.function(make_step(m2)))
    if warm:
        slow(s)
        fast(s)
    return s


def train_epoch(step, xs, ys):
    total = 0.0
    for i in range(BATCHES):
        total += float(step(xs[i], ys[i]))
    return total / BATCHES


def slow(s):
    return train_epoch(s.step, s.xs, s.ys)


def fast(s):
    return train_epoch(s.graph_step, s.xs, s.ys)


if __name__ == "__main__":
    state = setup(warm=False)
    for _ in range(EPOCHS):
        slow(state)
