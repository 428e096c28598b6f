"""Which Keras backend a script will get, read as Keras reads it, without importing Keras:
``tfdiag run`` loads TensorFlow up front (its start-up log lines kept) only for the
TensorFlow backend (issue 32, also noticed: it loaded TensorFlow into JAX scripts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfdiag.capture import environment
from tfdiag.capture.environment import configured_keras_backend


@pytest.fixture
def unloaded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(environment, "keras_backend", lambda: None)
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    return tmp_path


def test_the_environment_variable_wins(unloaded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (unloaded / "keras.json").write_text(json.dumps({"backend": "torch"}))
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    assert configured_keras_backend() == "jax"


def test_then_keras_json_then_tensorflow(unloaded: Path) -> None:
    assert configured_keras_backend() == "tensorflow"
    (unloaded / "keras.json").write_text(json.dumps({"backend": "jax"}))
    assert configured_keras_backend() == "jax"
    (unloaded / "keras.json").write_text("{not json")
    assert configured_keras_backend() == "tensorflow"


def test_a_loaded_keras_answers_for_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment, "keras_backend", lambda: "numpy")
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    assert configured_keras_backend() == "numpy"
