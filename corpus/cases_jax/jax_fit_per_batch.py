"""Keras 3 on JAX: an online learner calls `fit(epochs=1)` on each incoming mini-batch
(profiled as the user's loop)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-fit-per-batch",
    title="my DQN replay step calls fit on 32 samples and takes far longer than the step itself",
    source="tensorflow/tensorflow#35124 (fit -> train_on_batch, ~70 s -> ~6 s per episode); "
    "keon/deep-q-learning#28; keras-team/keras#22561 (fit's per-call cost on every backend)",
    mechanism=(
        "replay() calls model.fit(batch, epochs=1) once per environment step: every fit "
        "builds a data adapter, a JAX epoch iterator, a CallbackList and a History, and "
        "gathers the state into and out of its jitted train function, for one gradient step "
        "of a 4-24-24-2 MLP; train_on_batch does the same step without the per-call set-up"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("train_on_batch",),
    premise=2.5,
    iterations=5,
    backend="jax",
)

ENV_STEPS = 16  # one slow() = sixteen environment steps, one replay minibatch each


def setup():
    import keras

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
