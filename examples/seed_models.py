"""Factories for ``python -m tfdiag compare --factory examples/seed_models.py:small``.

A factory returns ``(model, x, y)``. These build the seeds' Conv1D + Dense models
(small/medium/large) on the seeds' data (batch 32, 30 channels, lengths
140/1400/14000), and seed 003's tiny Dense 4 → 2 → 1 model (``tiny``). Because they
take a ``flavour`` argument, ``compare`` calls each one twice when tf_keras is
installed — once for Keras 3, once for tf_keras — and measures both (the seeds'
"keras vs tf.keras").

Write your own the same way: build and compile your model, load a batch of your
data, return them.
"""

from __future__ import annotations

from typing import Any

from tfdiag.measure.seed_models import BATCH_SHAPE, batch_shape, build_model, make_data, tiny_model


def seed_case(model: str, data: str, flavour: str = "keras3") -> tuple[Any, Any, Any]:
    """The seeds' ``make_model_<model>`` on their ``<data>`` batch, compiled."""
    shape = batch_shape(data)
    x, y = make_data(shape, seed=0)
    return build_model(model, shape, flavour), x, y


def tiny(flavour: str = "keras3") -> tuple[Any, Any, Any]:
    """Seed 003's Dense 4 → 2 → 1 on one batch of 32 × 4: where predict's overhead shows most."""
    x, y = make_data(BATCH_SHAPE, seed=0)
    return tiny_model(flavour), x, y


def small(flavour: str = "keras3") -> tuple[Any, Any, Any]:
    """Small model on small data: (32, 140, 30)."""
    return seed_case("small", "small", flavour)


def medium(flavour: str = "keras3") -> tuple[Any, Any, Any]:
    """Medium model on medium data: (32, 1400, 30)."""
    return seed_case("medium", "medium", flavour)


def large(flavour: str = "keras3") -> tuple[Any, Any, Any]:
    """Large model on large data: (32, 14000, 30). Minutes per call on a CPU."""
    return seed_case("large", "large", flavour)
