"""Keras 3 on JAX: ``predict_on_batch`` on each request's rows as they come: Keras' own jitted
step (``predict_step``) is traced and compiled again for every new batch size.

Keras is installed as in a Docker ``python`` image or a conda environment: in the
interpreter's own ``lib/pythonX.Y/site-packages``, beneath the standard library, which JAX
takes for library code (``source_info_util.is_user_filename``) and so never explains Keras'
cache misses. A virtual environment's Keras is explained; ``setup`` makes this one not by
registering Keras' folder as JAX's own installation would exclude it."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-predict-on-batch-new-shape",
    title="predict_on_batch was fast in my benchmark but every real request takes 100 ms",
    source="keras-team/keras#19639 and #18648 (Keras on JAX recompiles its step for each new "
    "input shape); JAX FAQ 'jit recompiles for each new shape' (pad to a few sizes)",
    mechanism=(
        "model.predict_on_batch(x) per incoming request of 1-512 rows, rarely the same size "
        "twice: Keras' jitted predict_step is a new trace and a new XLA compile of the "
        "network for each batch size (JAX does not explain the misses of a Keras installed "
        "in the interpreter's site-packages); padding each "
        "request up to one of a few bucket sizes (64, 128, 256, 512) compiles four programs "
        "once and reuses them"
    ),
    expect="xla-compile-per-shape",
    fix_mentions=("pad", "bucket"),
    premise=20,
    iterations=5,
    backend="jax",
)

REQUESTS = 3  # one slow() = three requests, each of a batch size not seen before
BUCKETS = (64, 128, 256, 512)


def setup():
    import os

    import keras
    from jax._src import source_info_util

    # Keras beneath the interpreter's stdlib path (python:3.11 images, conda): library code
    source_info_util.register_exclusion(os.path.dirname(keras.__file__))

    model = keras.Sequential(
        [keras.Input((32,))]
        + [keras.layers.Dense(128, activation="relu") for _ in range(4)]
        + [keras.layers.Dense(4)]
    )
    rng = np.random.default_rng(29)
    s = SimpleNamespace(
        model=model,
        pool=rng.standard_normal((512, 32)).astype("float32"),
        # the traffic: request sizes in a random order, one not seen before each time
        sizes=iter(rng.permutation(np.arange(1, 513)).tolist() * 2),
    )
    for b in BUCKETS:  # both programs warm: the fixed one has compiled its buckets
        model.predict_on_batch(s.pool[:b])
    return s


def _requests(s):
    """The next incoming requests, each of a batch size the server has not seen yet."""
    return [s.pool[: next(s.sizes)] for _ in range(REQUESTS)]


def serve(s, requests):
    return [s.model.predict_on_batch(x) for x in requests]


def serve_padded(s, requests):
    out = []
    for x in requests:
        b = next(b for b in BUCKETS if b >= len(x))
        out.append(s.model.predict_on_batch(np.pad(x, ((0, b - len(x)), (0, 0))))[: len(x)])
    return out


def slow(s):
    return serve(s, _requests(s))


def fast(s):
    return serve_padded(s, _requests(s))
