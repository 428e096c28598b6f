"""tf_keras DQN acting loop (`predict` per environment step), profiled by the user with
a bare `cProfile` and read back with `tfdiag.load_report(path, iterations=N)`."""

import cProfile
import os
import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="prof-file-rl-tf-keras",
    title="cProfile says my episode loop spends its time inside Keras; what do I change?",
    source="tensorflow/tensorflow#35124 (predict->predict_on_batch, ~70 s -> ~6 s per "
    "episode); tensorflow/tensorflow#46126 (predict on a single batch: use "
    "predict_on_batch); keon/deep-q-learning#28",
    mechanism=(
        "act() calls tf_keras model.predict(state[None]) once per environment step to pick "
        "an action: each call builds a DataHandler and callbacks for one 4-float row"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("predict_on_batch", "model(x, training=False)"),
    premise=15,
    iterations=5,
    also=("per-iteration-tracing",),
)

STEPS = 3  # environment steps per episode


def setup():
    import tf_keras as keras

    keras.utils.set_random_seed(42)
    model = keras.Sequential(
        [
            keras.Input((4,)),
            keras.layers.Dense(24, activation="relu"),
            keras.layers.Dense(24, activation="relu"),
            keras.layers.Dense(2),
        ]
    )
    rng = np.random.default_rng(42)
    s = SimpleNamespace(model=model, rng=rng)
    s.start = rng.standard_normal(4).astype("float32")
    model.predict(s.start[None], verbose=0)
    return s


def _env_step(state, action):
    """A CartPole-like toy transition (deterministic)."""
    return (np.roll(state, 1) * 0.9 + (0.1 if action else -0.1)).astype("float32")


def run_episode(model, start):
    """The user's loop."""
    state, actions = start, []
    for _ in range(STEPS):
        q = model.predict(state[None], verbose=0)
        action = int(np.argmax(q[0]))
        actions.append(action)
        state = _env_step(state, action)
    return actions


def run_episode_fixed(model, start):
    state, actions = start, []
    for _ in range(STEPS):
        q = model(state[None], training=False)
        action = int(np.argmax(q[0]))
        actions.append(action)
        state = _env_step(state, action)
    return actions


def slow(s):
    return run_episode(s.model, s.start)


def fast(s):
    return run_episode_fixed(s.model, s.start)


def diagnose(s, iterations):
    """What the user did: cProfile around N episodes, dump_stats, then load_report."""
    import tfdiag

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(iterations):
        run_episode(s.model, s.start)
    prof.disable()
    path = os.path.join(tempfile.mkdtemp(prefix="tfdiag-corpus-prof-"), "episodes.prof")
    prof.dump_stats(path)
    return tfdiag.load_report(path, iterations=iterations)
