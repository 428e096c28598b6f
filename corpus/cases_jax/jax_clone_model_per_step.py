"""Keras 3 on JAX: a DQN learner clones its target network with `clone_model` on every
learning step."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-clone-model-per-step",
    title="my DQN's learning step takes a second on the JAX backend; the network is tiny",
    source="keras-team/keras#18648; keras-io 'Deep Q-Learning for Atari Breakout' (the target "
    "model is built once, weights copied with set_weights); tensorflow/tensorflow#35124",
    mechanism=(
        "learn() does target = keras.models.clone_model(model); target.set_weights(...) and "
        "then target.predict_on_batch(next_states) on every step: each clone is a new model "
        "with new layers and variables, and its first predict_on_batch traces and XLA-compiles "
        "a new predict function; a target network built once and refreshed with set_weights "
        "reuses its compiled function (clone_model also makes Keras import TensorFlow, "
        "though the program never does)"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("set_weights", "once"),
    premise=20,
    iterations=5,
    backend="jax",
)

STEPS = 2  # one slow() = two learning steps
GAMMA = 0.99


def setup():
    import keras

    model = keras.Sequential(
        [
            keras.Input((8,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(4),
        ]
    )
    model.compile(keras.optimizers.Adam(1e-3), "mse")
    rng = np.random.default_rng(31)
    states = rng.standard_normal((32, 8)).astype("float32")
    next_states = rng.standard_normal((32, 8)).astype("float32")
    rewards = rng.standard_normal((32, 1)).astype("float32")
    target = keras.models.clone_model(model)
    target.set_weights(model.get_weights())
    s = SimpleNamespace(
        model=model, target=target, states=states, next_states=next_states, rewards=rewards
    )
    slow(s)
    fast(s)
    return s


def _update(s, target):
    q_next = np.asarray(target.predict_on_batch(s.next_states))
    y = s.rewards + GAMMA * q_next.max(axis=1, keepdims=True)
    return float(s.model.train_on_batch(s.states, np.repeat(y, 4, axis=1)))


def slow(s):
    import keras

    losses = []
    for _ in range(STEPS):
        target = keras.models.clone_model(s.model)  # as written: a new target each step
        target.set_weights(s.model.get_weights())
        losses.append(_update(s, target))
    return losses


def fast(s):
    losses = []
    for _ in range(STEPS):
        s.target.set_weights(s.model.get_weights())  # the fix: one target, new weights
        losses.append(_update(s, s.target))
    return losses
