"""Keras 3: `fit(batch_size=1)` on a small model: one Python round trip per sample."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="fit-batch-size-1",
    title="training with batch_size=1 is painfully slow although the model is tiny",
    source="keras-team/keras#102; keras-team/keras-core PR#838 (steps_per_execution: 'small "
    "models with a large Python overhead'); keon/deep-q-learning#28",
    mechanism=(
        "384 steps of one sample each: per step the trainer calls the train function, runs "
        "callbacks and converts logs to Python; the 8->16->1 step is microseconds"
    ),
    expect="per-step-overhead",
    fix_mentions=("steps_per_execution", "batch_size"),
    premise=3.0,
    iterations=2,
)

N = 384


def setup():
    import keras

    keras.utils.set_random_seed(9)

    def build(spe):
        m = keras.Sequential(
            [keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)]
        )
        m.compile(keras.optimizers.SGD(0.01), "mse", steps_per_execution=spe)
        return m

    model = build(1)
    fixed = build(64)  # same sample order and updates, 64 steps per call into the graph
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(9)
    x = rng.standard_normal((N, 8)).astype("float32")
    y = rng.standard_normal((N, 1)).astype("float32")
    model.fit(x[:64], y[:64], batch_size=1, shuffle=False, verbose=0)
    fixed.fit(x[:64], y[:64], batch_size=1, shuffle=False, verbose=0)
    return SimpleNamespace(model=model, fixed=fixed, x=x, y=y)


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=1, epochs=1, shuffle=False, verbose=0)


def fast(s):
    return s.fixed.fit(s.x, s.y, batch_size=1, epochs=1, shuffle=False, verbose=0)
