"""Keras 3 on JAX trained by the user's own step, not jitted: stateless_call and jax.grad
run op by op from Python on every step (tfdiag fix: @jax.jit on the step)."""

import os

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax
import keras
import numpy as np

keras.utils.set_random_seed(3)
model = keras.Sequential(
    [keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
)
rng = np.random.default_rng(3)
x = rng.standard_normal((64, 16)).astype("float32")
y = x[:, :1] * 0.5


def loss_fn(trainable, non_trainable, x, y):
    pred, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
    return jax.numpy.mean((pred - y) ** 2), non_trainable


grad_fn = jax.value_and_grad(loss_fn, has_aux=True)


def train_step(trainable, non_trainable, x, y):
    (loss, non_trainable), grads = grad_fn(trainable, non_trainable, x, y)
    return loss, [w - 0.05 * g for w, g in zip(trainable, grads)], non_trainable


trainable = [v.value for v in model.trainable_variables]
non_trainable = [v.value for v in model.non_trainable_variables]
for _ in range(60):
    loss, trainable, non_trainable = train_step(trainable, non_trainable, x, y)
print(f"loss {float(loss):.4f}")
