"""Measure Keras execution methods on the user's own model and data; the seeds' grid.

``tfdiag.compare(model, x, y)`` (:func:`tfdiag.measure.run.compare`) times every
method (``predict``, ``predict_on_batch``, ``model(x)``, ``tf.function``, ``fit``,
``train_on_batch``, ...) interleaved, checks each one's output against ``predict``, and
recommends the fastest safe one; :data:`METHODS` is the table of methods.
``python -m tfdiag bench`` runs the seeds' benchmark grid. Nothing here imports
TensorFlow until a model is run.
"""

from __future__ import annotations

from tfdiag.measure.methods import METHODS, Method
from tfdiag.measure.run import compare
from tfdiag.records.compare import MethodResult
from tfdiag.records.numbers import signed_percent
from tfdiag.results.bench import BenchResult
from tfdiag.results.compare import CompareResult

__all__ = [
    "METHODS",
    "BenchResult",
    "CompareResult",
    "Method",
    "MethodResult",
    "compare",
    "signed_percent",
]
