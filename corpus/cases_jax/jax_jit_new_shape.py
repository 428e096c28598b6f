"""Keras 3 on JAX: a jitted inference function served requests of varying length: XLA
compiles it again for every new batch size."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-jit-new-shape",
    title="my jax.jit predict function is fast in the benchmark but slow on real traffic",
    source="jax-ml/jax#2521 and jax-ml/jax#5222 (recompiles for every new shape; pad to a few "
    "sizes); JAX FAQ 'jit recompiles for each new shape'; keras-team/keras#19639",
    mechanism=(
        "forward = jax.jit(model.stateless_call) is called on each request's rows as they "
        "come (batch sizes 1-1024, rarely the same twice): each new shape is a new trace and "
        "a new XLA compile of the whole network; padding every request up to one of a few "
        "bucket sizes (128, 256, 512, 1024) compiles four programs once and reuses them"
    ),
    expect="xla-compile-per-shape",
    fix_mentions=("pad", "bucket"),
    premise=50,
    iterations=5,
    backend="jax",
    known_miss="no-known-cause ranks first: the trace and XLA compile jax.jit runs for each "
    "new batch size are not counted",
)

REQUESTS = 3  # one slow() = three requests, each of a batch size not seen before
BUCKETS = (128, 256, 512, 1024)


def setup():
    import jax
    import jax.numpy as jnp
    import keras

    model = keras.Sequential(
        [keras.Input((24,))]
        + [keras.layers.Dense(128, activation="relu") for _ in range(4)]
        + [keras.layers.Dense(4)]
    )
    model.build((None, 24))

    @jax.jit
    def forward(trainable, non_trainable, x):
        return model.stateless_call(trainable, non_trainable, x, training=False)[0]

    rng = np.random.default_rng(23)
    s = SimpleNamespace(
        forward=forward,
        trainable=[jnp.array(v.value) for v in model.trainable_variables],
        non_trainable=[jnp.array(v.value) for v in model.non_trainable_variables],
        rng=rng,
        pool=rng.standard_normal((1024, 24)).astype("float32"),
        # The traffic: request sizes in a random order, one not seen before each time
        # (1024 of them: more than any run of the case asks for).
        sizes=iter(rng.permutation(np.arange(1, 1025)).tolist() * 2),
    )
    for b in BUCKETS:  # both programs warm: the fixed one has compiled its buckets
        forward(s.trainable, s.non_trainable, s.pool[:b])
    return s


def _requests(s):
    """The next incoming requests, each of a batch size the server has not seen yet."""
    return [s.pool[: next(s.sizes)] for _ in range(REQUESTS)]


def serve(s, requests):
    return [np.asarray(s.forward(s.trainable, s.non_trainable, x)) for x in requests]


def serve_padded(s, requests):
    out = []
    for x in requests:
        b = next(b for b in BUCKETS if b >= len(x))
        padded = np.pad(x, ((0, b - len(x)), (0, 0)))
        out.append(np.asarray(s.forward(s.trainable, s.non_trainable, padded))[: len(x)])
    return out


def slow(s):
    return serve(s, _requests(s))


def fast(s):
    return serve_padded(s, _requests(s))
