"""Keras 3: an RL agent calls `fit(epochs=1)` on one replay minibatch per environment step."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="fit-per-step-rl",
    title="my DQN episode takes 70 s; fit on a 32-sample minibatch is slow",
    source="tensorflow/tensorflow#35124 (robieta: fit->train_on_batch, ~70 s -> ~6 s per "
    "episode); keon/deep-q-learning#28",
    mechanism=(
        "replay() calls model.fit(batch, epochs=1) once per environment step: every fit builds "
        "a data adapter, an epoch iterator over a fresh tf.data pipeline, a CallbackList and a "
        "History for one gradient step"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("train_on_batch", "tf.function"),
    premise=29,
    iterations=5,
    also=("per-iteration-tracing",),
)

ENV_STEPS = 3  # one slow() = three environment steps, one replay minibatch each


def setup():
    import keras

    keras.utils.set_random_seed(4)
    model = keras.Sequential(
        [
            keras.Input((4,)),
            keras.layers.Dense(24, activation="relu"),
            keras.layers.Dense(24, activation="relu"),
            keras.layers.Dense(2),
        ]
    )
    model.compile(keras.optimizers.Adam(1e-3), "mse")
    rng = np.random.default_rng(4)
    states = rng.standard_normal((ENV_STEPS, 32, 4)).astype("float32")
    targets = rng.standard_normal((ENV_STEPS, 32, 2)).astype("float32")
    model.fit(states[0], targets[0], epochs=1, verbose=0)
    model.train_on_batch(states[0], targets[0])
    return SimpleNamespace(model=model, states=states, targets=targets)


def replay(model, states, targets):
    """The agent's learning step, once per environment step."""
    losses = []
    for x, y in zip(states, targets):
        hist = model.fit(x, y, batch_size=32, epochs=1, verbose=0)
        losses.append(hist.history["loss"][0])
    return losses


def replay_fixed(model, states, targets):
    return [float(model.train_on_batch(x, y)) for x, y in zip(states, targets)]


def slow(s):
    return replay(s.model, s.states, s.targets)


def fast(s):
    return replay_fixed(s.model, s.states, s.targets)


def target(s):
    return replay, (s.model, s.states, s.targets), {}
