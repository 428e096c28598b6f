"""One process-wide hook on TensorFlow's tracer, shared by every block that listens.

TensorFlow builds every ``tf.function`` graph in
``tracing_compilation._create_concrete_function``. That function is wrapped once, when the
first listener comes (a ``max_traces`` block, a profiled call's trace recorder), and put
back when the last one leaves, even when its block raised: a count of listeners, under a
lock, not a wrapper per block (two blocks in two threads each wrapped and restored in turn:
the second recorded nothing, and the first's wrapper stayed installed for good).

A listener hears the traces of its own context only: the thread (or asyncio task) that
started listening, between its start and its end. Traces of other threads go to their own
listeners. Each context holds its listeners in a stack (a :class:`~contextvars.ContextVar`
of tuples, so a task or a copied context never shares a list with another).

TensorFlow is never imported here: when the caller has not imported it, or its internals
moved, :func:`listen` says it could not.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

MODULE = "tensorflow.python.eager.polymorphic_function.tracing_compilation"
TARGET = "_create_concrete_function"


class Listener(Protocol):
    """What hears a trace: :meth:`note` before the graph is built, :meth:`count_ops` after
    (with what :meth:`note` returned). Neither may raise."""

    def note(self, tracing_options: Any, function_type: Any) -> Any: ...

    def count_ops(self, token: Any, func_graph: Any) -> None: ...


class _Entry:
    """One listener's turn: ``active`` until it leaves (a listener that left in another
    context than it came in is silenced, not left listening)."""

    __slots__ = ("active", "listener")

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.active = True


_stack: ContextVar[tuple[_Entry, ...]] = ContextVar("tfdiag_trace_listeners", default=())
_lock = threading.Lock()
_users = 0
#: ``(module, TensorFlow's function, the hook)`` while the hook is in TensorFlow's module.
_installed: tuple[Any, Callable[..., Any], Callable[..., Any]] | None = None


def _make_hook(original: Callable[..., Any]) -> Callable[..., Any]:
    def traced(function_type: Any, type_context: Any, func_graph: Any, tracing_options: Any) -> Any:
        heard = [e for e in _stack.get() if e.active]
        tokens = []
        for entry in heard:
            try:
                tokens.append((entry.listener, entry.listener.note(tracing_options, function_type)))
            except Exception:  # noqa: BLE001 - a record, never a reason for the call to fail
                continue
        out = original(function_type, type_context, func_graph, tracing_options)
        for listener, token in tokens:
            try:
                listener.count_ops(token, func_graph)
            except Exception:  # noqa: BLE001
                continue
        return out

    traced.__wrapped__ = original  # type: ignore[attr-defined]
    return traced


def _acquire() -> bool:
    """One more user of the hook; installs it for the first. False: TensorFlow's tracer
    is not there (not imported, or moved)."""
    global _users, _installed
    with _lock:
        module = sys.modules.get(MODULE)
        if _installed is not None and _installed[0] is not module:
            _installed = None  # TensorFlow's module was replaced: the old hook went with it
        if _installed is None:
            original = getattr(module, TARGET, None)
            if module is None or original is None:
                return False
            hook = _make_hook(original)
            setattr(module, TARGET, hook)
            _installed = (module, original, hook)
        _users += 1
        return True


def _release() -> None:
    """One user fewer; the last one puts TensorFlow's function back (when nothing wrapped
    the hook since: then the hook stays, silent without listeners, and is reused)."""
    global _users, _installed
    with _lock:
        _users -= 1
        if _users or _installed is None:
            return
        module, original, hook = _installed
        if getattr(module, TARGET, None) is hook:
            setattr(module, TARGET, original)
            _installed = None


def installed() -> bool:
    """Whether the hook is in TensorFlow's module now."""
    with _lock:
        return _installed is not None and getattr(_installed[0], TARGET, None) is _installed[2]


@contextmanager
def listen(listener: Listener) -> Iterator[bool]:
    """``listener`` hears this context's traces while the block runs; yields whether it
    could (False: TensorFlow's tracer is not there, and nothing is heard)."""
    if not _acquire():
        yield False
        return
    entry = _Entry(listener)
    try:
        _stack.set((*_stack.get(), entry))
        yield True
    finally:
        entry.active = False
        _stack.set(tuple(e for e in _stack.get() if e is not entry))
        _release()


def listeners() -> list[Listener]:
    """The listeners of this context, in the order they started."""
    return [e.listener for e in _stack.get() if e.active]


def innermost(listener: Listener, kind: type) -> bool:
    """Whether ``listener`` is listening in this context and no listener of ``kind`` came
    after it here (its block is the innermost of that kind: blocks that nest)."""
    mine = [e.listener for e in _stack.get() if e.active and isinstance(e.listener, kind)]
    return bool(mine) and mine[-1] is listener
