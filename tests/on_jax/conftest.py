"""Tests of Keras 3 on the JAX backend: this directory runs in its own pytest process with
``KERAS_BACKEND=jax`` (see the Makefile's ``test`` target); Keras reads the variable once,
at its first import, so the two backends never share a process."""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("KERAS_BACKEND") != "jax":
        raise pytest.UsageError("tests/on_jax/ runs with KERAS_BACKEND=jax (make test does)")


@pytest.fixture(scope="session")
def keras_jax():  # type: ignore[no-untyped-def]
    """Keras, imported on JAX (fails the test if Keras chose another backend)."""
    import keras

    assert keras.backend.backend() == "jax"
    return keras
