"""Compare Keras execution methods on the user's own model and data; the seeds' grid.

``tfdiag.compare(model, x, y)`` times every method (``predict``, ``predict_on_batch``,
``model(x)``, ``tf.function``, ``fit``, ``train_on_batch``, ...) interleaved, checks
each one's output against ``predict``, and recommends the fastest safe one.
``python -m tfdiag bench`` runs the seeds' benchmark grid. Nothing here imports
TensorFlow until a model is run.
"""

from __future__ import annotations

from tfdiag.compare.measure import signed_percent
from tfdiag.compare.methods import METHODS, Method
from tfdiag.compare.result import CompareResult, MethodResult
from tfdiag.compare.run import compare

__all__ = ["METHODS", "CompareResult", "Method", "MethodResult", "compare", "signed_percent"]
