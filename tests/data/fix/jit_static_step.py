"""A jitted step whose step size is a static argument that changes every step: JAX
compiles the step anew for each value (tfdiag fix: no longer static)."""

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(1,))  # the step size as "plain Python"
def step(w, scale):
    return w - scale * (jnp.tanh(w @ w.T) @ w)


w = jnp.ones((32, 32)) / 32
for i in range(30):
    w = step(w, 0.1 / (1 + i))  # a decaying step size
print(f"total {float(w.sum()):.5f}")
