"""Neuro-evolution: a new Keras policy model is built for every individual's weights."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="model-rebuilt-per-iteration",
    title="evaluating my population is slow, and memory grows every generation",
    source="tensorflow/tensorflow#42441 and #43555 (rapidly creating new models: retracing "
    "warnings, workaround predict_on_batch); keras-team/keras#13710 (slowdown traced to a new "
    "model object per call); tensorflow/tensorflow#46012",
    mechanism=(
        "fitness(weights) calls build_policy() then set_weights(w) for every individual: each "
        "call constructs a new Sequential model (layers, variables, initialisers) to run one "
        "small forward pass; building the model once and only swapping weights does the same"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("once",),
    premise=3.7,
    iterations=5,
)

POPULATION = 4


def build_policy():
    import keras

    return keras.Sequential(
        [
            keras.Input((8,)),
            keras.layers.Dense(32, activation="tanh"),
            keras.layers.Dense(32, activation="tanh"),
            keras.layers.Dense(4, activation="softmax"),
        ]
    )


def setup():
    import keras

    keras.utils.set_random_seed(17)
    template = build_policy()
    rng = np.random.default_rng(17)
    population = [
        [rng.standard_normal(w.shape).astype("float32") * 0.3 for w in template.get_weights()]
        for _ in range(POPULATION)
    ]
    obs = rng.standard_normal((16, 8)).astype("float32")
    s = SimpleNamespace(population=population, obs=obs, policy=build_policy())
    fast(s)
    return s


def fitness(weights, obs):
    """The user's evaluation of one individual."""
    model = build_policy()
    model.set_weights(weights)
    probs = model(obs, training=False)
    return float(np.mean(np.max(probs, axis=1)))


def slow(s):
    return [fitness(w, s.obs) for w in s.population]


def fast(s):
    scores = []
    for w in s.population:
        s.policy.set_weights(w)  # the model is built once (setup); only weights change
        probs = s.policy(s.obs, training=False)
        scores.append(float(np.mean(np.max(probs, axis=1))))
    return scores
