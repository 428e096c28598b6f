"""The copy's guard against Keras' serialization loading TensorFlow, on a fake lazy module:
no TensorFlow, no Keras, no JAX."""

from __future__ import annotations

import sys
import types

import pytest

from tfdiag.measure.subject import serializing_without_tensorflow


class _Lazy:
    def __init__(self, available: bool | None) -> None:
        self._available = available


@pytest.fixture
def lazy(monkeypatch: pytest.MonkeyPatch) -> _Lazy:
    module = types.ModuleType("keras.src.utils.module_utils")
    module.tensorflow = _Lazy(None)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "keras.src.utils.module_utils", module)
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    return module.tensorflow  # type: ignore[attr-defined, no-any-return]


def test_without_tensorflow_loaded_keras_is_told_it_is_unavailable_then_put_back(
    lazy: _Lazy,
) -> None:
    with serializing_without_tensorflow():
        assert lazy._available is False
    assert lazy._available is None


def test_the_lazy_module_is_put_back_when_the_copy_raises(lazy: _Lazy) -> None:
    with pytest.raises(ValueError), serializing_without_tensorflow():
        raise ValueError("clone_model failed")
    assert lazy._available is None


def test_nothing_changes_with_tensorflow_loaded_or_its_answer_known(
    lazy: _Lazy, monkeypatch: pytest.MonkeyPatch
) -> None:
    lazy._available = True  # Keras already asked and found it
    with serializing_without_tensorflow():
        assert lazy._available is True
    lazy._available = None
    monkeypatch.setitem(sys.modules, "tensorflow", types.ModuleType("tensorflow"))
    with serializing_without_tensorflow():
        assert lazy._available is None
