"""A DDPG-style loop: the actor is called eagerly on every environment step, beside a
compiled (`tf.function`) update step."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="rl-eager-actor",
    title="my RL agent's environment loop is slow although the update step is a tf.function",
    source="keras-io examples/rl/ddpg_pendulum.py (the policy is called eagerly per step); "
    "keras-team/keras#19315 (JIT for models called directly, e.g. RL)",
    mechanism=(
        "each environment step calls actor(obs) eagerly (a small Keras model: its layers' "
        "Python and every op dispatched one by one), then the compiled update; calling the "
        "actor through a tf.function built once makes its forward pass one graph call"
    ),
    expect="eager-execution",
    fix_mentions=("tf.function(lambda x:",),
    premise=1.4,
    iterations=5,
)

STEPS = 32


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(12)
    actor = keras.Sequential(
        [
            keras.Input((3,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1, activation="tanh"),
        ]
    )
    opt = keras.optimizers.Adam(1e-3)
    rng = np.random.default_rng(12)
    states = tf.constant(rng.standard_normal((64, 3)).astype("float32"))

    @tf.function
    def update(batch):
        with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(actor(batch, training=True))
        grads = tape.gradient(loss, actor.trainable_variables)
        opt.apply_gradients(zip(grads, actor.trainable_variables))

    act = tf.function(lambda x: actor(x, training=False))
    s = SimpleNamespace(actor=actor, act=act, update=update, states=states, tf=tf)
    s.obs = tf.constant(rng.standard_normal((1, 3)).astype("float32"))
    slow(s)
    fast(s)
    return s


def _episode(s, policy):
    obs = s.obs
    for _ in range(STEPS):
        a = policy(obs)
        obs = s.tf.tanh(obs + 0.1 * a)  # the environment's step
        s.update(s.states)


def slow(s):
    _episode(s, s.actor)


def fast(s):
    _episode(s, s.act)
