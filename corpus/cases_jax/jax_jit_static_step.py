"""Keras 3 on JAX: a custom `jax.jit` train step whose Python step counter is a static
argument, so every call compiles a new XLA program."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-jit-static-step",
    title="my jax.jit train step is slower than plain Python; every step seems to compile",
    source="jax-ml/jax#4572 and jax-ml/jax#196 (a static argument is part of the cache key); "
    "JAX docs 'Just-in-time compilation' (static_argnums: recompiles for each new value); "
    "keras.io 'Writing a training loop from scratch in JAX'",
    mechanism=(
        "update(trainable, non_trainable, x, y, step) is jax.jit(static_argnums=4) so the "
        "learning-rate schedule can use step as a Python int: each new step is a new cache "
        "key, so every call traces the model's stateless_call and jax.grad again and XLA "
        "compiles the whole step; passed as an array, step is an input of one compiled program"
    ),
    expect="per-iteration-tracing",
    fix_mentions=("static_argnums", "static_argnames", "jnp.asarray"),
    premise=300,
    iterations=5,
    backend="jax",
    known_miss="no-known-cause ranks first: the trace and XLA compile jax.jit runs on every "
    "call (a new static value each time) are not counted",
)

STEPS = 2  # one slow() = two training steps


def setup():
    import jax
    import jax.numpy as jnp
    import keras

    model = keras.Sequential(
        [
            keras.Input((16,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    model.build((None, 16))

    def loss_fn(trainable, non_trainable, x, y):
        pred, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        return jnp.mean((pred - y) ** 2), non_trainable

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def step_body(trainable, non_trainable, x, y, step):
        lr = 0.05 / (1.0 + 0.001 * step)  # the user's schedule
        (loss, non_trainable), grads = grad_fn(trainable, non_trainable, x, y)
        trainable = [w - lr * g for w, g in zip(trainable, grads)]
        return loss, trainable, non_trainable

    # As written: step is static so the schedule can be "plain Python".
    update_static = jax.jit(step_body, static_argnums=4)
    # The fix: no static_argnums; step is passed as an array.
    update = jax.jit(step_body)

    rng = np.random.default_rng(12)
    x = jnp.asarray(rng.standard_normal((64, 16)).astype("float32"))
    y = jnp.asarray(rng.standard_normal((64, 1)).astype("float32"))

    def weights():
        return (
            [jnp.array(v.value) for v in model.trainable_variables],
            [jnp.array(v.value) for v in model.non_trainable_variables],
        )

    s = SimpleNamespace(x=x, y=y, update_static=update_static, update=update)
    s.slow_weights, s.fast_weights = weights(), weights()
    s.slow_count = s.fast_count = 0
    slow(s)
    fast(s)
    return s


def train(s, update, weights, count, as_array):
    import jax.numpy as jnp

    trainable, non_trainable = weights
    loss = None
    for _ in range(STEPS):
        count += 1
        step = jnp.asarray(count, dtype="float32") if as_array else count
        loss, trainable, non_trainable = update(trainable, non_trainable, s.x, s.y, step)
    return float(loss), (trainable, non_trainable), count


def slow(s):
    loss, s.slow_weights, s.slow_count = train(
        s, s.update_static, s.slow_weights, s.slow_count, as_array=False
    )
    return loss


def fast(s):
    loss, s.fast_weights, s.fast_count = train(
        s, s.update, s.fast_weights, s.fast_count, as_array=True
    )
    return loss
