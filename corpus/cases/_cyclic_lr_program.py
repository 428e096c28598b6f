"""One program for two cases (``compile-per-epoch-cyclic-lr``, ``…-run``): a Keras 3
classifier trained one `fit(epochs=1)` at a time over a `tf.data` dataset, with a
triangular (cyclical) learning rate set by calling `compile(SGD(lr, momentum=0.9))` before
each epoch. Run as a script it trains ``EPOCHS`` epochs
(``python -m tfdiag run corpus/cases/_cyclic_lr_program.py``).

`compile()` resets the model's `train_function`, so every `fit` traces its train step
again (and the new SGD builds its momentum slots); the fix compiles once and assigns the
rate: `model.optimizer.learning_rate.assign(lr)` (or a `LearningRateScheduler`)."""

from types import SimpleNamespace

import numpy as np

EPOCHS = 10
N, FEATURES, CLASSES, BATCH = 512, 20, 5, 64


def cyclic_lr(epoch, low=1e-3, high=1e-2, period=4):
    """Triangular cyclical learning rate (Smith 2017)."""
    phase = (epoch % period) / (period / 2)
    return low + (high - low) * (1 - abs(phase - 1))


def setup(warm=True):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(83)
    rng = np.random.default_rng(83)
    x = rng.standard_normal((N, FEATURES)).astype("float32")
    y = rng.integers(0, CLASSES, (N,)).astype("int32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=83).batch(BATCH)

    def build():
        return keras.Sequential(
            [
                keras.Input((FEATURES,)),
                keras.layers.Dense(48, activation="relu"),
                keras.layers.Dropout(0.1),
                keras.layers.Dense(CLASSES),
            ]
        )

    def compile_with(model, lr):
        model.compile(
            keras.optimizers.SGD(lr, momentum=0.9),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )

    model, fixed = build(), build()
    fixed.set_weights(model.get_weights())
    compile_with(fixed, cyclic_lr(0))
    s = SimpleNamespace(model=model, fixed=fixed, ds=ds, epoch=0, compile_with=compile_with)
    if warm:
        slow(s)
        fast(s)
    return s


def slow(s):
    s.epoch += 1
    s.compile_with(s.model, cyclic_lr(s.epoch))  # a new compile to set the rate
    return s.model.fit(s.ds, epochs=1, verbose=0)


def fast(s):
    # The fix: compiled once; the rate is assigned to the optimizer's variable.
    s.epoch += 1
    s.fixed.optimizer.learning_rate.assign(cyclic_lr(s.epoch))
    return s.fixed.fit(s.ds, epochs=1, verbose=0)


if __name__ == "__main__":
    state = setup(warm=False)
    for _ in range(EPOCHS):
        slow(state)
