"""Keras 3 on JAX: per-sample error code that loops over the rows of a prediction and runs
`keras.ops` on each row, one small eager JAX op (and a read back to Python) at a time, where
one op over the batch axis does all rows at once."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-per-row-ops",
    title="computing a per-sample error with keras.ops on JAX takes longer than the model",
    source="jax-ml/jax#1832 ('JAX performance can be better': op-by-op dispatch from Python); "
    "JAX docs 'Thinking in JAX' (vectorise, or jit: each eager op is dispatched on its own)",
    mechanism=(
        "for i in range(n): float(ops.mean(ops.abs(pred[i] - target[i]))) dispatches an index, "
        "a subtract, an abs and a mean as compiled primitives from Python for every row, and "
        "reads each back to the host; ops.mean(ops.abs(pred - target), axis=-1) is one op"
    ),
    expect="eager-execution",
    fix_mentions=("whole array", "batch axis"),
    premise=20,
    iterations=3,
    backend="jax",
)

ROWS = 200


def per_sample_error(pred, target):
    """The user's code: one row at a time."""
    from keras import ops

    return np.array([float(ops.mean(ops.abs(pred[i] - target[i]))) for i in range(ROWS)])


def setup():
    from keras import ops

    rng = np.random.default_rng(7)
    s = SimpleNamespace(
        pred=ops.convert_to_tensor(rng.random((ROWS, 3), dtype=np.float32)),
        target=ops.convert_to_tensor(rng.random((ROWS, 3), dtype=np.float32)),
    )
    slow(s)
    fast(s)
    return s


def slow(s):
    return per_sample_error(s.pred, s.target)


def fast(s):
    from keras import ops

    return np.asarray(ops.mean(ops.abs(s.pred - s.target), axis=-1))


def target(s):
    return per_sample_error, (s.pred, s.target), {}
