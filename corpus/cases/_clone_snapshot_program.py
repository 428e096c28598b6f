"""One program for two cases (``clone-snapshot-per-round``, ``…-run``): a Keras 3 training
loop that, before each round of `train_on_batch` steps, scores the validation set on a
frozen copy of the model made with `keras.models.clone_model` + `set_weights`. Run as a
script it trains ``ROUNDS`` rounds
(``python -m tfdiag run corpus/cases/_clone_snapshot_program.py``).

A cloned model is a new model: it has no traced predict step, so each round's
`snapshot.predict_on_batch` traces one (and the clone builds every layer again); the
fix builds the snapshot once and copies the weights into it each round."""

from types import SimpleNamespace

import numpy as np

ROUNDS = 150
STEPS, BATCH, FEATURES, CLASSES, VAL = 4, 64, 24, 6, 512


def setup(warm=True):
    import keras

    keras.utils.set_random_seed(87)
    rng = np.random.default_rng(87)
    x = rng.standard_normal((STEPS, BATCH, FEATURES)).astype("float32")
    y = rng.integers(0, CLASSES, (STEPS, BATCH)).astype("int32")
    x_val = rng.standard_normal((VAL, FEATURES)).astype("float32")
    y_val = rng.integers(0, CLASSES, (VAL,)).astype("int32")
    model = keras.Sequential(
        [
            keras.Input((FEATURES,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(CLASSES),
        ]
    )
    model.compile(
        "adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False
    )
    snapshot = keras.models.clone_model(model)  # the fix's copy, built once
    s = SimpleNamespace(
        model=model, snapshot=snapshot, x=x, y=y, x_val=x_val, y_val=y_val, scores=[]
    )
    if warm:
        slow(s)
        fast(s)
    return s


def _train(s):
    for i in range(STEPS):
        s.model.train_on_batch(s.x[i], s.y[i])


def _score(s, frozen):
    logits = frozen.predict_on_batch(s.x_val)
    s.scores.append(float(np.mean(np.argmax(logits, axis=1) == s.y_val)))


def slow(s):
    import keras

    frozen = keras.models.clone_model(s.model)  # a new model every round
    frozen.set_weights(s.model.get_weights())
    _score(s, frozen)  # the score before the round's training
    _train(s)


def fast(s):
    # The fix: one snapshot model, its weights copied in each round.
    s.snapshot.set_weights(s.model.get_weights())
    _score(s, s.snapshot)
    _train(s)


if __name__ == "__main__":
    state = setup(warm=False)
    for _ in range(ROUNDS):
        slow(state)
