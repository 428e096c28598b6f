"""One program for ``fit-batch-size-1-run``: a script that trains a tiny model with
``fit(batch_size=1)`` once, as most scripts call ``fit`` (``tfdiag run`` diagnoses the one
call from inside, batch by batch). Run as a script it trains once
(``python -m tfdiag run corpus/cases/_fit_batch_one_program.py``)."""

from types import SimpleNamespace

import numpy as np

ROWS, FEATURES = 768, 8


def build(spe: int):
    import keras

    m = keras.Sequential(
        [keras.Input((FEATURES,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)]
    )
    m.compile(keras.optimizers.SGD(0.01), "mse", steps_per_execution=spe)
    return m


def setup(warm=True):
    import keras

    keras.utils.set_random_seed(11)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((ROWS, FEATURES)).astype("float32")
    y = rng.standard_normal((ROWS, 1)).astype("float32")
    model, fixed = build(1), build(64)  # the fix: 64 steps per call into the graph
    fixed.set_weights(model.get_weights())
    s = SimpleNamespace(model=model, fixed=fixed, x=x, y=y)
    if warm:
        model.fit(x[:64], y[:64], batch_size=1, shuffle=False, verbose=0)
        fixed.fit(x[:64], y[:64], batch_size=1, shuffle=False, verbose=0)
    return s


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=1, epochs=1, shuffle=False, verbose=0)


def fast(s):
    return s.fixed.fit(s.x, s.y, batch_size=1, epochs=1, shuffle=False, verbose=0)


if __name__ == "__main__":
    slow(setup(warm=False))
