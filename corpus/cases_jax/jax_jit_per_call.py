"""Keras 3 on JAX: `jax.jit` applied to a new lambda inside the function the user calls, so
every call traces and compiles again."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-jit-per-call",
    title="I wrapped my scoring function in jax.jit and it got slower, not faster",
    source="jax-ml/jax#3712 and jax-ml/jax#16590 (jit's cache is keyed on the function "
    "object: a new lambda per call recompiles); JAX docs 'Just-in-time compilation' "
    "('avoid calling jax.jit on temporary functions')",
    mechanism=(
        "scores(x, temperature) does jax.jit(lambda tv, ntv, x: softmax(model.stateless_call("
        "tv, ntv, x)[0] / temperature)) and calls it: the lambda is a new object every call, "
        "so jit's cache never hits and each call traces the model and compiles it with XLA; "
        "jitted once at module level with temperature as an argument, it compiles once"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("once", "outside"),
    premise=300,
    iterations=5,
    backend="jax",
    known_miss="no-known-cause (or drift) ranks first: the trace and XLA compile of the new "
    "jitted function on every call are not counted",
)

CALLS = 2  # one slow() = two scoring calls


def setup():
    import jax
    import jax.numpy as jnp
    import keras

    model = keras.Sequential(
        [keras.Input((32,))]
        + [keras.layers.Dense(128, activation="relu") for _ in range(3)]
        + [keras.layers.Dense(10)]
    )
    model.build((None, 32))
    trainable = [jnp.array(v.value) for v in model.trainable_variables]
    non_trainable = [jnp.array(v.value) for v in model.non_trainable_variables]

    def scores(x, temperature):
        """As written: the jitted function is made inside, around a lambda."""
        f = jax.jit(
            lambda tv, ntv, x: jax.nn.softmax(
                model.stateless_call(tv, ntv, x, training=False)[0] / temperature
            )
        )
        return f(trainable, non_trainable, x)

    @jax.jit
    def _scores(tv, ntv, x, temperature):
        return jax.nn.softmax(model.stateless_call(tv, ntv, x, training=False)[0] / temperature)

    def scores_fixed(x, temperature):
        """The fix: one jitted function, defined once, temperature an argument."""
        return _scores(trainable, non_trainable, x, temperature)

    x = np.random.default_rng(5).standard_normal((16, 32)).astype("float32")
    s = SimpleNamespace(scores=scores, scores_fixed=scores_fixed, x=x)
    slow(s)
    fast(s)
    return s


def slow(s):
    return [np.asarray(s.scores(s.x, 2.0)) for _ in range(CALLS)]


def fast(s):
    return [np.asarray(s.scores_fixed(s.x, 2.0)) for _ in range(CALLS)]
