"""The copy's guard against Keras' serialization loading TensorFlow, on a fake lazy module:
no TensorFlow, no Keras, no JAX. The copying thread is told "no TensorFlow"; every other
thread gets Keras' own answer, and nothing is decided for the process (issue 32.14: a
process-wide flag made another thread's ``keras.layers.Hashing`` raise "requires
TensorFlow")."""

from __future__ import annotations

import sys
import threading
import types

import pytest

from tfdiag.measure.subject import serializing_without_tensorflow


class _Lazy:
    """Keras' ``LazyModule``: ``available`` imports the module once and caches the answer."""

    def __init__(self, available: bool | None) -> None:
        self._available = available
        self.imports = 0

    @property
    def available(self) -> bool:
        if self._available is None:
            self.imports += 1
            self._available = True  # TensorFlow is installed
        return self._available


@pytest.fixture
def lazy(monkeypatch: pytest.MonkeyPatch) -> _Lazy:
    module = types.ModuleType("keras.src.utils.module_utils")
    module.tensorflow = _Lazy(None)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "keras.src.utils.module_utils", module)
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    return module.tensorflow  # type: ignore[attr-defined, no-any-return]


def _in_another_thread(lazy: _Lazy) -> bool:
    seen: list[bool] = []
    thread = threading.Thread(target=lambda: seen.append(lazy.available))
    thread.start()
    thread.join(timeout=10)
    return seen[0]


def test_the_copying_thread_is_told_no_tensorflow_without_deciding_it_for_the_process(
    lazy: _Lazy,
) -> None:
    with serializing_without_tensorflow():
        assert lazy.available is False
        assert lazy._available is None and lazy.imports == 0
    assert type(lazy) is _Lazy  # put back as it was


def test_another_thread_gets_kerass_own_answer_while_a_model_is_copied(lazy: _Lazy) -> None:
    """A thread building ``keras.layers.Hashing`` during a copy asks ``tf.available``."""
    with serializing_without_tensorflow():
        assert _in_another_thread(lazy) is True
        assert lazy.imports == 1
    assert lazy.available is True


def test_overlapping_copies_in_two_threads_each_are_told_no(lazy: _Lazy) -> None:
    inside, leave = threading.Event(), threading.Event()
    seen: list[bool] = []

    def copy() -> None:
        with serializing_without_tensorflow():
            inside.set()
            leave.wait(10)
            seen.append(lazy.available)

    thread = threading.Thread(target=copy)
    thread.start()
    inside.wait(10)
    with serializing_without_tensorflow():
        assert lazy.available is False
    assert type(lazy) is not _Lazy  # the other copy still runs: still asks which thread
    leave.set()
    thread.join(timeout=10)
    assert seen == [False] and type(lazy) is _Lazy and lazy.imports == 0


def test_the_lazy_module_is_put_back_when_the_copy_raises(lazy: _Lazy) -> None:
    with pytest.raises(ValueError), serializing_without_tensorflow():
        raise ValueError("clone_model failed")
    assert type(lazy) is _Lazy and lazy._available is None


def test_nothing_changes_with_tensorflow_loaded_or_its_answer_known(
    lazy: _Lazy, monkeypatch: pytest.MonkeyPatch
) -> None:
    lazy._available = True  # Keras already asked and found it
    with serializing_without_tensorflow():
        assert lazy.available is True and type(lazy) is _Lazy
    lazy._available = None
    monkeypatch.setitem(sys.modules, "tensorflow", types.ModuleType("tensorflow"))
    with serializing_without_tensorflow():
        assert type(lazy) is _Lazy
        assert lazy.available is True
