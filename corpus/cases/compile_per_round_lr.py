"""A training script that calls `compile()` before every round to set a new learning rate."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="compile-per-round-lr",
    title="every round of my training loop is slow, the first batch of each takes seconds",
    source="keras-team/keras#19249 and tensorflow/tensorflow#41184 (re-compiling to change the "
    "learning rate retraces the train step); Keras docs: LearningRateScheduler",
    mechanism=(
        "round(lr) calls model.compile(optimizer=Adam(lr)) then trains a few batches with "
        "train_on_batch: each compile throws the traced train step away, so it is traced again; "
        "assigning `model.optimizer.learning_rate` keeps it"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("learning_rate.assign",),
    premise=20.0,
    iterations=5,
)

BATCHES = 4


def setup():
    import keras

    keras.utils.set_random_seed(9)
    model = keras.Sequential(
        [
            keras.Input((16,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    rng = np.random.default_rng(9)
    x = rng.standard_normal((BATCHES, 32, 16)).astype("float32")
    y = rng.standard_normal((BATCHES, 32, 1)).astype("float32")
    s = SimpleNamespace(model=model, x=x, y=y, lr=1e-3)
    model.compile(keras.optimizers.Adam(1e-3), "mse")
    model.train_on_batch(x[0], y[0])
    return s


def train_round(s):
    """The user's round: a new learning rate, a new compile, a few batches."""
    import keras

    s.lr *= 0.99
    s.model.compile(keras.optimizers.Adam(s.lr), "mse")
    for b in range(BATCHES):
        s.model.train_on_batch(s.x[b], s.y[b])


def slow(s):
    train_round(s)


def fast(s):
    s.lr *= 0.99
    s.model.optimizer.learning_rate.assign(s.lr)
    for b in range(BATCHES):
        s.model.train_on_batch(s.x[b], s.y[b])


def target(s):
    return train_round, (s,), {}
