"""A Keras 3 model trained on JAX by the user's own ``jax.jit`` step (keras.io's "Writing a
training loop from scratch in JAX": ``stateless_call`` inside a jitted ``train_step``), its
learning-rate schedule read off a step counter passed as a static argument so that it can
be "plain Python": every new step value is a new cache key, so each step traces and
compiles the whole update again. The fix: no ``static_argnums`` (the counter is then an
array input of one compiled program). Run as a script (``tfdiag run``), it trains
``STEPS`` steps; ``setup``/``slow``/``fast`` measure the premise in one process."""

from functools import partial
from types import SimpleNamespace

import numpy as np

STEPS = 12


def build():
    import keras

    model = keras.Sequential(
        [keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
    )
    model.build((None, 16))
    return model


def make_update(model, static: bool):
    import jax
    import jax.numpy as jnp

    def loss_fn(trainable, non_trainable, x, y):
        pred, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        return jnp.mean((pred - y) ** 2), non_trainable

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def train_step(trainable, non_trainable, x, y, step):
        lr = 0.05 / (1.0 + 0.01 * step)  # the schedule, "plain Python" on a static step
        (loss, non_trainable), grads = grad_fn(trainable, non_trainable, x, y)
        return loss, [w - lr * g for w, g in zip(trainable, grads)], non_trainable

    return partial(jax.jit, static_argnums=4)(train_step) if static else jax.jit(train_step)


def data():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 16)).astype("float32")
    return x, x[:, :1] * 0.5


def train(update, model, x, y, first: int = 0) -> float:
    trainable = [v.value for v in model.trainable_variables]
    non_trainable = [v.value for v in model.non_trainable_variables]
    loss = None
    for step in range(first, first + STEPS):
        loss, trainable, non_trainable = update(trainable, non_trainable, x, y, step)
    return float(loss)


def setup():
    model = build()
    x, y = data()
    s = SimpleNamespace(model=model, x=x, y=y, slow=make_update(model, True))
    s.fast, s.first = make_update(model, False), 0
    slow(s)
    fast(s)
    return s


def slow(s):
    s.first += STEPS  # new step values, as a longer run has: each compiles
    return train(s.slow, s.model, s.x, s.y, s.first)


def fast(s):
    return train(s.fast, s.model, s.x, s.y, s.first)


if __name__ == "__main__":
    model = build()
    x, y = data()
    print(f"loss {train(make_update(model, True), model, x, y):.4f}")
