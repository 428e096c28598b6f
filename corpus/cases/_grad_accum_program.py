"""One program for `grad-accumulation-micro-batches-run`: a custom loop that accumulates
gradients over 32 micro-batches of 4 samples, each through its own eager `GradientTape`, and
applies them once per optimizer step (the "effective batch of 128 on a small GPU" recipe),
diagnosed with `tfdiag run` on the script. Run as a script it makes ``STEPS`` optimizer
steps (``python -m tfdiag run corpus/cases/_grad_accum_program.py``).
"""

from types import SimpleNamespace

import numpy as np

MICRO, MICRO_BATCH, FEATURES = 32, 4, 32
STEPS = 6


def build():
    import keras

    return keras.Sequential(
        [keras.Input((FEATURES,))]
        + [keras.layers.Dense(64, activation="relu") for _ in range(3)]
        + [keras.layers.Dense(1)]
    )


def setup(warm=True):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(8)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((MICRO * MICRO_BATCH, FEATURES)).astype("float32")
    y = rng.standard_normal((MICRO * MICRO_BATCH, 1)).astype("float32")
    model, fixed = build(), build()
    fixed.set_weights(model.get_weights())
    opt, fixed_opt = keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3)

    @tf.function
    def big_batch_step(xb, yb):
        # The fix: the 128 samples in one compiled step (the mean loss over the micro-batches
        # equals the mean over the whole batch when they are the same size).
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(fixed(xb, training=True) - yb))
        grads = tape.gradient(loss, fixed.trainable_variables)
        fixed_opt.apply_gradients(zip(grads, fixed.trainable_variables))
        return loss

    s = SimpleNamespace(
        x=x,
        y=y,
        model=model,
        opt=opt,
        big_batch_step=big_batch_step,
        xt=tf.constant(x),
        yt=tf.constant(y),
        tf=tf,
    )
    if warm:
        slow(s)
        fast(s)
    return s


def accumulation_step(s):
    """The user's optimizer step: 32 micro-batches, gradients summed, applied once."""
    tf = s.tf
    variables = s.model.trainable_variables
    accumulated = [tf.zeros_like(v) for v in variables]
    for i in range(MICRO):
        xb = s.x[i * MICRO_BATCH : (i + 1) * MICRO_BATCH]
        yb = s.y[i * MICRO_BATCH : (i + 1) * MICRO_BATCH]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(s.model(xb, training=True) - yb)) / MICRO
        grads = tape.gradient(loss, variables)
        accumulated = [a + g for a, g in zip(accumulated, grads)]
    s.opt.apply_gradients(zip(accumulated, variables))


def slow(s):
    return accumulation_step(s)


def fast(s):
    return float(s.big_batch_step(s.xt, s.yt))


if __name__ == "__main__":
    state = setup(warm=False)
    for _ in range(STEPS):
        slow(state)
