"""Keras 3 on JAX: an online learner calls `fit(epochs=1)` on each incoming mini-batch
(profiled as the user's loop)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-fit-per-batch",
    title="my DQN replay step calls fit on 32 samples and takes far longer than the step itself",
    source="tensorflow/tensorflow#35124 (fit -> train_on_batch, ~70 s -> ~6 s per episode); "
    "keon/deep-q-learning#28; keras-team/keras#22561 (fit's per-call cost on every backend)",
    mechanism=(
        "replay() calls model.fit(batch, epochs=1) once per environment step: every fit "
        "builds a data adapter, a JAX epoch iterator, a CallbackList and a History, and "
        "gathers the state into and out of its jitted train function, for one gradient step "
        "of a 4-24-24-2 MLP; the fix is the train step itself, jax.jit of stateless_call, "
        "jax.grad and optimizer.stateless_apply built once (keras.io's JAX training loop; "
        "train_on_batch, the smaller change, gains ~1.5-4x and is noisy here)"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("train_on_batch", "stateless_apply", "jax.jit"),
    premise=8,
    iterations=5,
    backend="jax",
    known_miss="per-epoch-overhead ranks first with 'use fewer, longer epochs', which the "
    "program has no use for: each fit is one epoch of one step, the cost is the fit call",
)

ENV_STEPS = 16  # one slow() = sixteen environment steps, one replay minibatch each


def setup():
    import keras

    model = keras.Sequential(
        [
            keras.Input((4,)),
            keras.layers.Dense(24, activation="relu"),
            keras.layers.Dense(24, activation="relu"),
            keras.layers.Dense(2),
        ]
    )
    model.compile(keras.optimizers.Adam(1e-3), "mse")
    rng = np.random.default_rng(4)
    states = rng.standard_normal((ENV_STEPS, 32, 4)).astype("float32")
    targets = rng.standard_normal((ENV_STEPS, 32, 2)).astype("float32")
    model.fit(states[0], targets[0], epochs=1, verbose=0)
    s = SimpleNamespace(model=model, states=states, targets=targets)
    s.step, s.train_state = make_train_step(model)
    fast(s)
    return s


def make_train_step(model):
    """The fix: the learning step as one jitted function of arrays (built once)."""
    import jax
    import jax.numpy as jnp

    optimizer = model.optimizer

    def loss_fn(trainable, non_trainable, x, y):
        pred, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        return jnp.mean(jnp.square(pred - y)), non_trainable  # the model's "mse"

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    @jax.jit
    def step(state, x, y):
        trainable, non_trainable, opt_vars = state
        (value, non_trainable), grads = grad_fn(trainable, non_trainable, x, y)
        trainable, opt_vars = optimizer.stateless_apply(opt_vars, grads, trainable)
        return value, (trainable, non_trainable, opt_vars)

    state = (
        [jnp.array(v.value) for v in model.trainable_variables],
        [jnp.array(v.value) for v in model.non_trainable_variables],
        [jnp.array(v.value) for v in optimizer.variables],
    )
    return step, state


def replay(model, states, targets):
    """The agent's learning step, once per environment step."""
    losses = []
    for x, y in zip(states, targets):
        hist = model.fit(x, y, batch_size=32, epochs=1, verbose=0)
        losses.append(hist.history["loss"][0])
    return losses


def replay_fixed(s):
    losses = []
    for x, y in zip(s.states, s.targets):
        value, s.train_state = s.step(s.train_state, x, y)
        losses.append(float(value))
    return losses


def slow(s):
    return replay(s.model, s.states, s.targets)


def fast(s):
    return replay_fixed(s)


def target(s):
    return replay, (s.model, s.states, s.targets), {}
