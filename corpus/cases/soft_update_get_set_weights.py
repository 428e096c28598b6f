"""A DQN/DDPG-style learner blends its target network toward the online network after every
step with `get_weights()`, NumPy arithmetic and `set_weights()`."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="soft-update-get-set-weights",
    title="my RL agent's update takes longer than the training step itself",
    source="keras-io DDPG example (update_target via variables) vs the get_weights/set_weights "
    "form in many user ports; tensorflow/tensorflow#33442 and keras-team/keras#13840 "
    "(get_weights/set_weights per step is slow)",
    mechanism=(
        "after each compiled train step, learn() copies every weight of the online and the "
        "target network to NumPy (get_weights), blends them in Python and writes them back "
        "(set_weights): 26 variables of a 12x64 MLP round-trip through host memory and one "
        "assign each per step; an in-graph assign in a tf.function does it in one call"
    ),
    expect="eager-execution",
    fix_mentions=("assign",),
    premise=4,  # 4.1-5.1x measured (--rounds 3, 2026-12-04, two runs)
    iterations=5,
)

TAU, STEPS = 0.005, 4


def _build():
    import keras

    return keras.Sequential(
        [keras.Input((32,))]
        + [keras.layers.Dense(64, activation="relu") for _ in range(12)]
        + [keras.layers.Dense(4)]
    )


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(3)
    online, target = _build(), _build()
    target.set_weights(online.get_weights())
    opt = keras.optimizers.Adam(1e-3)
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal((8, 32)).astype("float32"))
    y = tf.constant(rng.standard_normal((8, 4)).astype("float32"))

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            q_next = target(xb, training=False)
            loss = tf.reduce_mean(tf.square(online(xb, training=True) - (yb + 0.9 * q_next)))
        grads = tape.gradient(loss, online.trainable_variables)
        opt.apply_gradients(zip(grads, online.trainable_variables))
        return loss

    @tf.function
    def update_target():
        for v_t, v in zip(target.weights, online.weights):
            v_t.assign(TAU * v + (1 - TAU) * v_t)

    s = SimpleNamespace(
        online=online, target=target, x=x, y=y, train_step=train_step, update_target=update_target
    )
    slow(s)
    fast(s)
    return s


def soft_update(target, online, tau):
    """The user's soft update: through NumPy."""
    blended = [
        tau * w + (1 - tau) * w_t for w, w_t in zip(online.get_weights(), target.get_weights())
    ]
    target.set_weights(blended)


def learn(s):
    for _ in range(STEPS):
        s.train_step(s.x, s.y)
        soft_update(s.target, s.online, TAU)


def slow(s):
    return learn(s)


def fast(s):
    # The fix: the blend as in-graph assigns on the variables, in one tf.function call.
    for _ in range(STEPS):
        s.train_step(s.x, s.y)
        s.update_target()


def target(s):
    return learn, (s,), {}
