"""The trace recorder: every graph TensorFlow traces during the profiled pass, with the
argument types it was traced for.

TensorFlow builds every ``tf.function`` graph (the user's, Keras's, tf.data's) in
``tracing_compilation._create_concrete_function``; while the recorder is on, it listens on
the process' one hook there (:mod:`tfdiag.capture.tracer_hook`: the traces of its own thread
only) and notes each traced Python function, its parameters' trace types
(``TensorSpec(shape=(8, 4), ...)``, ``Literal[3]``) and which ``tf.function`` object traced
it (a number per object, by the object itself: two models' ``predict_on_batch`` are two).
It costs nothing per call of a graph that is already traced. TensorFlow is never imported
here: when the caller has not imported it, or its internals moved, nothing is recorded.
"""

from __future__ import annotations

import dataclasses
import gc
import inspect
import re
import threading
import weakref
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from tfdiag.capture import tracer_hook
from tfdiag.records.catalog.backends import DEFAULT
from tfdiag.records.traces import MAX_TRACES, TraceEvent

_MODULE = tracer_hook.MODULE
_TARGET = tracer_hook.TARGET
#: TensorFlow's suffix for another op of the same name in one scope (``mul_12``).
_NUMBERED = re.compile(r"_\d+$")
#: Longest parameter type kept (a nested structure's repr can be long).
_MAX_TYPE = 160


def _function_object(tracing_options: Any) -> Any:
    """What stands for the ``tf.function`` object that traces: its captures container (one
    per ``Function``, shared by its variable-creating and later traces, and freed with it),
    else the traced Python callable."""
    captures = getattr(tracing_options, "function_captures", None)
    return captures if captures is not None else getattr(tracing_options, "python_function", None)


def _describe(tracing_options: Any, function_type: Any, call: int, function_id: int) -> TraceEvent:
    fn = getattr(tracing_options, "python_function", None)
    original = inspect.unwrap(fn) if callable(fn) else fn
    code = getattr(original, "__code__", None)
    params = []
    for p in getattr(function_type, "parameters", {}).values():
        text = repr(p.annotation)
        params.append((str(p.name), text if len(text) <= _MAX_TYPE else text[:_MAX_TYPE] + "…"))
    return TraceEvent(
        call=call,
        function=str(getattr(original, "__qualname__", getattr(fn, "__qualname__", "?"))),
        file=code.co_filename if code is not None else "",
        line=code.co_firstlineno if code is not None else 0,
        name=str(getattr(tracing_options, "name", "")),
        params=tuple(params),
        function_id=function_id,
    )


class TraceRecorder:
    """Collects :class:`TraceEvent` s; ``call`` is set by the pass before each call. A
    :class:`~tfdiag.capture.session.Probe`: its record is the report's ``traces``."""

    field = "traces"

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self.call = 0
        self.dropped = 0
        #: Each ``tf.function`` object seen: ``id`` -> (a weak reference, its number).
        self._objects: dict[int, tuple[Callable[[], Any], int]] = {}
        self._seen = 0
        self._lock = threading.Lock()  # a copied context may trace in another thread

    @staticmethod
    def applies(backend: str | None) -> bool:
        """TensorFlow's tracer: never on a Keras 3 backend other than TensorFlow."""
        return backend in (None, DEFAULT.name)

    def attach(self) -> AbstractContextManager[bool]:
        return recording(self)

    def set_call(self, i: int) -> None:
        self.call = i

    def record(self, calls: int | None = None) -> tuple[TraceEvent, ...]:
        """The traces of calls ``0`` to ``calls - 1`` (None: all)."""
        return tuple(e for e in self.events if calls is None or 0 <= e.call < calls)

    def dropped_note(self) -> str | None:
        return f"{self.dropped} graph trace(s) were not recorded" if self.dropped else None

    def note(self, tracing_options: Any, function_type: Any) -> int | None:
        """Record one trace; its index in :attr:`events` (None when not recorded)."""
        with self._lock:
            if len(self.events) >= MAX_TRACES:
                self.dropped += 1
                return None
            try:
                number = self._number(_function_object(tracing_options))
                self.events.append(_describe(tracing_options, function_type, self.call, number))
            except Exception:  # a record, never a reason for the user's call to fail
                self.dropped += 1
                return None
            return len(self.events) - 1

    def _number(self, obj: Any) -> int:
        """The object's number: the same for the same object, another for another (an id
        reused by a later object after the first was freed is another object)."""
        if obj is None:
            return 0
        known = self._objects.get(id(obj))
        if known is not None and known[0]() is obj:
            return known[1]
        try:
            ref: Callable[[], Any] = weakref.ref(obj)
        except TypeError:  # cannot be watched: counted as freed
            ref = _gone
        self._seen += 1
        self._objects[id(obj)] = (ref, self._seen)
        return self._seen

    def alive(self) -> set[int]:
        """The numbers of the ``tf.function`` objects still alive (after a collection: a
        function made for one call and dropped is freed)."""
        gc.collect()
        with self._lock:
            return {n for ref, n in self._objects.values() if ref() is not None}

    def count_ops(self, index: int | None, func_graph: Any) -> None:
        """Note how many ops the traced graph ended with."""
        if index is None:
            return
        try:
            names = [op.name for op in func_graph.get_operations()]
        except Exception:  # noqa: BLE001 - internals moved: the count stays unknown
            return
        same = Counter(_NUMBERED.sub("", name) for name in names)
        repeats = max(same.values(), default=0)
        with self._lock:
            self.events[index] = dataclasses.replace(
                self.events[index], ops=len(names), repeats=repeats
            )


def _gone() -> None:
    return None


def recording(recorder: TraceRecorder) -> AbstractContextManager[bool]:
    """The recorder hears this thread's traces while the block runs; yields whether it could."""
    return tracer_hook.listen(recorder)
