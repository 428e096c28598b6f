"""The Python-callback hook: times every call TensorFlow makes back into Python.

``tf.py_function``, ``tf.numpy_function`` and ``Dataset.from_generator`` all run their
Python through one registry, ``script_ops.FuncRegistry``, whose ``__call__`` TensorFlow's
C++ invokes from whichever thread runs the op (tf.data's, the executor's). While the
hook is on, that method is wrapped: each call is timed and counted against the
registered function. It costs about a microsecond per call, against the hundreds of
microseconds a Python op costs anyway; TensorFlow is never imported here.
"""

from __future__ import annotations

import inspect
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from tfdiag.records.callbacks import PyCallback
from tfdiag.records.clock import Clock

_MODULE = "tensorflow.python.ops.script_ops"


def _generator_source(func: Any) -> Any:
    """The callable ``Dataset.from_generator`` was given, from the closure of the function
    it registers (``generator_py_func``) or the state its id function is bound to."""
    state = getattr(func, "__self__", None)
    if state is not None and hasattr(state, "_generator"):
        return state._generator
    for cell in getattr(func, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        source = getattr(value, "_generator", None)
        if source is not None:
            return source
    return None


def _pydataset(source: Any) -> tuple[str, str, int, str] | None:
    """A Keras 3 PyDataset behind a generator: Keras' adapter hands ``from_generator`` its
    own bound method; what runs is the dataset's ``__getitem__``."""
    dataset = getattr(getattr(source, "__self__", None), "py_dataset", None)
    getitem = getattr(type(dataset), "__getitem__", None)
    code = getattr(getitem, "__code__", None)
    if dataset is None or code is None:
        return None
    workers = getattr(dataset, "workers", "?")
    processes = getattr(dataset, "use_multiprocessing", "?")
    name = (
        f"{type(dataset).__qualname__}.__getitem__ "
        f"(a PyDataset, workers={workers}, use_multiprocessing={processes})"
    )
    return name, code.co_filename, code.co_firstlineno, "pydataset"


def _cells(func: Any) -> dict[str, Any]:
    """A function's closure, by the names it reads (empty cells left out)."""
    code = getattr(func, "__code__", None)
    out: dict[str, Any] = {}
    for name, cell in zip(
        getattr(code, "co_freevars", ()), getattr(func, "__closure__", None) or ()
    ):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    return out


def _sequence(source: Any) -> tuple[str, str, int, str] | None:
    """A tf_keras ``Sequence`` behind a generator: tf_keras' adapter hands ``from_generator``
    a ``wrapped_generator`` closed over the adapter (``self._keras_sequence``) and its
    ``generator_fn`` (closed over ``workers`` and ``use_multiprocessing`` when it starts a
    pool; with one worker and no processes it reads ``x[i]`` itself)."""
    cells = _cells(source)
    sequence = getattr(cells.get("self"), "_keras_sequence", None)
    code = getattr(getattr(type(sequence), "__getitem__", None), "__code__", None)
    if sequence is None or code is None:
        return None
    pool = _cells(cells.get("generator_fn"))
    workers = pool.get("workers", 1)
    processes = pool.get("use_multiprocessing", False)
    name = (
        f"{type(sequence).__qualname__}.__getitem__ "
        f"(a Sequence, workers={workers}, use_multiprocessing={processes})"
    )
    return name, code.co_filename, code.co_firstlineno, "pydataset"


def _describe(func: Any) -> tuple[str, str, int, str]:
    """``(name, file, line, kind)`` of a registered function: the user's function for a
    ``py_function`` (an ``EagerFunc`` wraps it), the generator for ``from_generator``, the
    dataset's ``__getitem__`` for a Keras PyDataset or a tf_keras Sequence."""
    kind = "numpy_function"
    inner = func
    if type(func).__name__ == "EagerFunc":
        kind, inner = "py_function", getattr(func, "_func", func)
    try:
        inner = inspect.unwrap(inner)
    except ValueError:
        pass
    source = _generator_source(inner)
    if source is not None:
        found = _pydataset(source) or _sequence(source)
        if found is not None:
            return found
        kind, inner = "generator", getattr(source, "__func__", source)
    code = getattr(inner, "__code__", None)
    name = str(getattr(inner, "__qualname__", type(inner).__name__))
    if code is None:
        return name, "", 0, kind
    return name, code.co_filename, code.co_firstlineno, kind


class Sink(Protocol):
    """What the hook records into: a :class:`CallbackRecorder`, or a router to one."""

    clock: Clock
    main: int

    @property
    def active(self) -> bool: ...

    @property
    def seen(self) -> dict[str, list[Any]]: ...


class CallbackRecorder:
    """Call counts and seconds per registered token, filled in by the wrapped registry."""

    def __init__(self, clock: Clock = time.perf_counter) -> None:
        self.clock = clock
        self.main = threading.get_ident()
        #: Calls are recorded only while this is true (the callback pauses it).
        self.active = True
        #: token → [description, calls, seconds, calls on the main thread]
        self.seen: dict[str, list[Any]] = {}

    def records(self) -> tuple[PyCallback, ...]:
        out = []
        for (name, file, line, kind), calls, seconds, main in self.seen.values():
            out.append(PyCallback(name, file, line, kind, calls, seconds, main))
        merged: dict[tuple[str, str, int, str], PyCallback] = {}
        for r in out:  # one function registered under several tokens (one per graph)
            key = (r.function, r.file, r.line, r.kind)
            old = merged.get(key)
            merged[key] = (
                r
                if old is None
                else PyCallback(
                    *key,
                    calls=old.calls + r.calls,
                    seconds=old.seconds + r.seconds,
                    main_thread_calls=old.main_thread_calls + r.main_thread_calls,
                )
            )
        return tuple(sorted(merged.values(), key=lambda r: r.seconds, reverse=True))


def install(recorder: Sink) -> Callable[[], None] | None:
    """Wrap TensorFlow's Python-callback registry; returns the function that restores it,
    or None when there is none (TensorFlow not imported, or kept elsewhere by this TF)."""
    module = sys.modules.get(_MODULE)
    registry = getattr(module, "FuncRegistry", None)
    original: Callable[..., Any] | None = vars(registry).get("__call__") if registry else None
    if registry is None or original is None:
        return None
    clock, main = recorder.clock, recorder.main

    def timed(self: Any, token: Any, device: Any, args: Any) -> Any:
        if not recorder.active:
            return original(self, token, device, args)
        t0 = clock()
        try:
            return original(self, token, device, args)
        finally:
            elapsed = clock() - t0
            entry = recorder.seen.get(token)
            if entry is None:
                try:
                    description = _describe(self.get(token))
                except Exception:  # a record, never a reason for the op to fail
                    description = ("?", "", 0, "numpy_function")
                entry = recorder.seen.setdefault(token, [description, 0, 0.0, 0])
            entry[1] += 1
            entry[2] += elapsed
            if threading.get_ident() == main:
                entry[3] += 1

    registry.__call__ = timed

    def restore() -> None:
        registry.__call__ = original

    return restore


@contextmanager
def hooked(recorder: CallbackRecorder) -> Iterator[bool]:
    """The hook on while the block runs; yields whether it could be installed."""
    restore = install(recorder)
    try:
        yield restore is not None
    finally:
        if restore is not None:
            restore()
