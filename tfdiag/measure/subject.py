"""The model and data under test, and what the methods share: copies, batches, datasets.

TensorFlow and Keras are imported on first use, never at import time.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

from tfdiag.measure.timing import one_line


class CopyError(RuntimeError):
    """The model could not be copied or compiled like the original."""


class Subject:
    """The model and data under test, and what methods share: copies, batches, modules."""

    def __init__(self, model: Any, x: Any, y: Any, *, batch_size: int, flavour: str) -> None:
        self.model, self.x, self.y = model, x, y
        self.batch_size, self.flavour = batch_size, flavour

    @cached_property
    def keras(self) -> Any:
        from tfdiag.measure.seed_models import keras_module

        return keras_module(self.flavour)

    @cached_property
    def tf(self) -> Any:
        import tensorflow as tf

        return tf

    @property
    def samples(self) -> int:
        return num_samples(self.x)

    @property
    def steps(self) -> int:
        """Batches in one pass over x."""
        return math.ceil(self.samples / self.batch_size)

    def batches(self) -> list[tuple[Any, Any]]:
        b = self.batch_size
        return [(take(self.x, i, i + b), take(self.y, i, i + b)) for i in range(0, self.samples, b)]

    def dataset(self, *, with_y: bool) -> Any:
        """``from_tensor_slices(...).batch(batch_size)``, built once by the caller."""
        data = (as_tuple(self.x), as_tuple(self.y)) if with_y else as_tuple(self.x)
        return self.tf.data.Dataset.from_tensor_slices(data).batch(self.batch_size)

    def copy(self, *, compile: bool, run_eagerly: bool = False) -> Any:
        """A clone with the same weights; compiled like the original when ``compile``."""
        with serializing_without_tensorflow():
            try:
                clone = self.keras.models.clone_model(self.model)
                clone.set_weights(self.model.get_weights())
            except Exception as exc:
                raise CopyError(f"cannot copy the model: {one_line(exc)}") from None
            if compile:
                config = self.compile_config()
                config["run_eagerly"] = run_eagerly
                if run_eagerly:
                    config["jit_compile"] = False
                clone.compile_from_config(config)
                if not is_compiled(clone):
                    raise CopyError("cannot compile a copy like the original (custom compile())")
        return clone

    def compile_config(self) -> dict[str, Any]:
        """The model's compile config (a copy), read without loading TensorFlow."""
        with serializing_without_tensorflow():
            config = dict(self.model.get_compile_config() or {})
        if not config:
            raise CopyError("the model is not compiled, so its copy cannot be")
        return config

    def loss(self, model: Any) -> float:
        logs = model.evaluate(
            self.x, self.y, batch_size=self.batch_size, verbose=0, return_dict=True
        )
        return float(logs["loss"])


#: The threads copying a model now (thread id: depth), and the lazy module's own class
#: while it is swapped, under :data:`_GUARD_LOCK`.
_COPYING: dict[int, int] = {}
_SWAPPED: list[tuple[Any, type]] = []
_GUARD_LOCK = threading.Lock()


def _answers_no_here(cls: type) -> type:
    """A subclass of Keras' lazy module class whose ``available`` is False in the threads
    that copy a model (while TensorFlow is not loaded) and Keras' own answer in every other."""

    class NotInTheCopy(cls):  # type: ignore[misc]
        @property
        def available(self) -> bool:
            if threading.get_ident() in _COPYING and "tensorflow" not in sys.modules:
                return False
            return super().available  # type: ignore[no-any-return]

    NotInTheCopy.__name__ = NotInTheCopy.__qualname__ = cls.__name__
    return NotInTheCopy


@contextmanager
def serializing_without_tensorflow() -> Iterator[None]:
    """Keras 3 serialization (``get_config``, hence ``clone_model``, ``get_compile_config``)
    asks ``tf.available`` before each ``isinstance(obj, tf.TensorShape)`` and so imports
    TensorFlow when it is installed (keras/src/saving/serialization_lib.py, Keras 3.15). While
    TensorFlow is not loaded no object can be one of its types, so the answer is "no" without
    importing it — in this thread only: Keras' cached answer (``_available``) is never set,
    and every other thread (one building a ``keras.layers.Hashing``, which needs TensorFlow)
    gets Keras' own answer. The lazy module's class is a subclass that asks which thread
    reads it while some thread copies, and is put back when the last copy ends. With
    TensorFlow loaded, or Keras' answer already known, nothing changes."""
    lazy = None
    if "tensorflow" not in sys.modules:
        utils = sys.modules.get("keras.src.utils.module_utils")
        lazy = getattr(utils, "tensorflow", None)
        if getattr(lazy, "_available", True) is not None:  # already decided: leave it
            lazy = None
    if lazy is None:
        yield
        return
    me = threading.get_ident()
    with _GUARD_LOCK:
        if not any(obj is lazy for obj, _ in _SWAPPED):
            _SWAPPED.append((lazy, type(lazy)))
            lazy.__class__ = _answers_no_here(type(lazy))
        _COPYING[me] = _COPYING.get(me, 0) + 1
    try:
        yield
    finally:
        with _GUARD_LOCK:
            _COPYING[me] -= 1
            if not _COPYING[me]:
                del _COPYING[me]
            while not _COPYING and _SWAPPED:
                obj, cls = _SWAPPED.pop()
                obj.__class__ = cls


# -- data helpers ---------------------------------------------------------------------


def leaves(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [leaf for key in sorted(x, key=str) for leaf in leaves(x[key])]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in leaves(item)]
    return [x]


def num_samples(x: Any) -> int:
    return int(leaves(x)[0].shape[0])


def take(x: Any, start: int, stop: int) -> Any:
    if x is None:
        return None
    if isinstance(x, dict):
        return {k: take(v, start, stop) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(take(v, start, stop) for v in x)
    return x[start:stop]


def as_tuple(x: Any) -> Any:
    """tf.data reads a list as one tensor to stack; several inputs must be a tuple."""
    return tuple(x) if isinstance(x, list) else x


def is_compiled(model: Any) -> bool:
    return bool(getattr(model, "compiled", getattr(model, "_is_compiled", False)))


def to_numpy(value: Any) -> Any:
    """Tensors (in any nesting) to NumPy, as ``predict`` returns them; waits for the device."""
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(v) for v in value)
    numpy = getattr(value, "numpy", None)
    return numpy() if callable(numpy) else value
