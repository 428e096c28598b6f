"""The trace recorder: every graph TensorFlow traces during the profiled pass, with the
argument types it was traced for.

TensorFlow builds every ``tf.function`` graph (the user's, Keras's, tf.data's) in
``tracing_compilation._create_concrete_function``; while the recorder is on, that one
private function is wrapped and each call notes the traced Python function and its
parameters' trace types (``TensorSpec(shape=(8, 4), ...)``, ``Literal[3]``). It costs
nothing per call of a graph that is already traced. TensorFlow is never imported
here: when the caller has not imported it, or its internals moved, nothing is recorded.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from tfdiag.records.traces import MAX_TRACES, TraceEvent

_MODULE = "tensorflow.python.eager.polymorphic_function.tracing_compilation"
_TARGET = "_create_concrete_function"
#: TensorFlow's suffix for another op of the same name in one scope (``mul_12``).
_NUMBERED = re.compile(r"_\d+$")
#: Longest parameter type kept (a nested structure's repr can be long).
_MAX_TYPE = 160


def _describe(tracing_options: Any, function_type: Any, call: int) -> TraceEvent:
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
        function_id=id(fn) if fn is not None else 0,
    )


class TraceRecorder:
    """Collects :class:`TraceEvent` s; ``call`` is set by the pass before each call. A
    :class:`~tfdiag.capture.session.Probe`: its record is the report's ``traces``."""

    field = "traces"

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self.call = 0
        self.dropped = 0

    @staticmethod
    def applies(backend: str | None) -> bool:
        """TensorFlow's tracer: never on a Keras 3 backend other than TensorFlow."""
        return backend in (None, "tensorflow")

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
        if len(self.events) >= MAX_TRACES:
            self.dropped += 1
            return None
        try:
            self.events.append(_describe(tracing_options, function_type, self.call))
        except Exception:  # a record, never a reason for the user's call to fail
            self.dropped += 1
            return None
        return len(self.events) - 1

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
        self.events[index] = dataclasses.replace(
            self.events[index], ops=len(names), repeats=repeats
        )


@contextmanager
def recording(recorder: TraceRecorder) -> Iterator[bool]:
    """Wrap TensorFlow's tracer while the block runs; yields whether it could."""
    module = sys.modules.get(_MODULE)
    original: Callable[..., Any] | None = getattr(module, _TARGET, None)
    if module is None or original is None:
        yield False
        return

    def traced(function_type: Any, type_context: Any, func_graph: Any, tracing_options: Any) -> Any:
        index = recorder.note(tracing_options, function_type)
        out = original(function_type, type_context, func_graph, tracing_options)
        recorder.count_ops(index, func_graph)
        return out

    setattr(module, _TARGET, traced)
    try:
        yield True
    finally:
        setattr(module, _TARGET, original)
