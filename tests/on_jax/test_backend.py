"""The JAX process is what it says: Keras on JAX, TensorFlow not imported by the program."""

from __future__ import annotations

import sys
from typing import Any

import pytest

pytestmark = pytest.mark.jax


def test_keras_runs_on_jax_without_tensorflow(keras_jax: Any) -> None:
    import numpy as np

    model = keras_jax.Sequential([keras_jax.Input((4,)), keras_jax.layers.Dense(2)])
    assert model.predict(np.zeros((8, 4), "float32"), verbose=0).shape == (8, 2)
    assert "tensorflow" not in sys.modules
