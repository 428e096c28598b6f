"""``tfdiag.max_traces(n)``: fail a block (or a decorated function) that traces any
``tf.function`` more than ``n`` times, naming each one and why it was traced again.

The traces are recorded by :mod:`tfdiag.capture.traces` (every ``tf.function``: the
user's, Keras's, tf.data's, traced in the block's own thread) and explained by
:mod:`tfdiag.advise.guards`; a function is its ``tf.function`` object while that object
lives (:func:`by_function`). TensorFlow is imported when the block starts, never at
``import tfdiag``.

XLA compilations are not counted yet: tfdiag does not record them. When a recorder for
them exists, count its events in :meth:`max_traces._problems` beside the traces.
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager, ContextDecorator
from types import TracebackType
from typing import Any

from tfdiag.advise.guards import Retraced, counted_traces, explain_retrace, retrace_fix
from tfdiag.capture import tracer_hook
from tfdiag.capture.traces import _MODULE, TraceRecorder, recording
from tfdiag.records.errors import InputError, TfdiagError
from tfdiag.records.text import clean
from tfdiag.records.traces import TraceEvent


class TooManyTraces(AssertionError):
    """A ``tf.function`` was traced more often than :func:`max_traces` allows.

    Attributes:
        limit: the ``n`` of ``max_traces(n)``.
        functions: each function traced more than ``limit`` times, with its cause.
    """

    def __init__(self, message: str, limit: int, functions: tuple[Retraced, ...]) -> None:
        super().__init__(message)
        self.limit = limit
        self.functions = functions


def _message(limit: int, found: tuple[Retraced, ...], dropped: int) -> str:
    lines = [
        f"{len(found)} tf.function(s) traced more than {limit} time(s) "
        f"(tfdiag.max_traces({limit})):"
    ]
    for r in found:
        lines.append(f"- `{r.function}` ({r.where}) was traced {r.traces}×: {r.cause}")
        lines.append(f"  fix: {retrace_fix(r.variant)}")
    if dropped:
        lines.append(f"({dropped} more traces were not recorded)")
    return clean("\n".join(lines))


def by_function(events: Sequence[TraceEvent], alive: Collection[int]) -> list[list[TraceEvent]]:
    """Each function's counted traces (:func:`~tfdiag.advise.guards.counted_traces`: by
    source, a tf.data function by name too), with one source's traces split by object when
    every ``tf.function`` object that traced it is still alive at the block's end (the
    numbers in ``alive``): two models' ``predict_on_batch``, two ``tf.Module`` s, a GAN's
    halves are two functions, each traced once. When one of them was freed, a ``tf.function``
    was made for a call and dropped: the source's traces are one function traced again."""
    out: list[list[TraceEvent]] = []
    for (_, _, _, data_name), traces in counted_traces(events).items():
        objects = list(dict.fromkeys(t.function_id for t in traces))
        if data_name or len(objects) < 2 or not all(o and o in alive for o in objects):
            out.append(traces)
            continue
        out.extend([t for t in traces if t.function_id == o] for o in objects)
    return out


def _retraced(recorder: TraceRecorder, limit: int) -> tuple[Retraced, ...]:
    """Every function traced more than ``limit`` times, most traces first; which objects
    live is asked (a garbage collection) only when a source's traces exceed the limit."""
    events = recorder.events
    pooled = [traces for traces in counted_traces(events).values() if len(traces) > limit]
    if not pooled:
        return ()
    out = []
    for traces in by_function(events, recorder.alive()):
        if len(traces) <= limit:
            continue
        variant, cause = explain_retrace(traces)
        first = traces[0]
        where = f"{first.file.replace(chr(92), '/').rsplit('/', 1)[-1] or '?'}:{first.line}"
        function = first.function
        if first.name.startswith("Dataset_") or "StructuredFunctionWrapper" in function:
            function, where = first.name, "tf.data"
        out.append(Retraced(function, where, len(traces), cause, variant))
    return tuple(sorted(out, key=lambda r: -r.traces))


class _BlockRecorder(TraceRecorder):
    """A ``max_traces`` block's recorder: which block it is, and whether a block of the same
    thread overlapped it without nesting."""

    def __init__(self, owner: max_traces) -> None:
        super().__init__()
        self.owner = owner
        self.overlapped = False
        self.watch: AbstractContextManager[bool] = recording(self)


_OVERLAP = (
    "max_traces: two max_traces blocks of one thread overlap without nesting (one ended while "
    "a block opened after it was still open): the traces between them cannot be told apart "
    "for either block, so neither is checked. Nest the blocks (close the later one first), "
    "or run them in separate threads or tasks"
)


class max_traces(ContextDecorator):  # noqa: N801 - used as a function: max_traces(1)
    """Count the graph traces of every ``tf.function`` inside the block; on exit, raise
    :class:`TooManyTraces` when one was traced more than ``n`` times.

    ``n`` is per function: per ``tf.function`` object while the objects live (two models'
    ``predict_on_batch`` are two functions), by source when one was dropped (a function
    re-made on every call counts as one function traced again). A function that creates
    variables on its first call is traced twice by TensorFlow then; that counts once. Only
    the block's own thread's traces count; blocks of one thread nest, and two that overlap
    without nesting are refused. An exception inside the block passes through unchanged, and
    is not masked by the check. Usable as a decorator (``@tfdiag.max_traces(1)``), each call
    counted on its own::

        with tfdiag.max_traces(1):
            for i in range(5):
                step(tf.constant(i))

    Raises:
        InputError: ``n`` is not a non-negative integer.
        TfdiagError: TensorFlow's tracer cannot be watched (TensorFlow missing, or its
            internals moved): the block does not run unchecked.
        TfdiagError: on exit, the block overlapped another block of its thread without
            nesting, or ended in another thread than it started in: not checked.
        TooManyTraces: on exit, a function was traced more than ``n`` times.
    """

    def __init__(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InputError(f"max_traces takes a number of traces (0 or more), got {n!r}")
        self.n = n
        self._active: list[_BlockRecorder] = []  # one per block open now, in any thread
        self._lock = threading.Lock()

    def __call__(self, func: Any) -> Any:
        """As a decorator. A generator or ``async def`` runs after the call returns, outside
        any block a wrapper could open: refused, not left unchecked."""
        if inspect.isgeneratorfunction(func) or inspect.iscoroutinefunction(func):
            raise InputError(
                f"max_traces cannot decorate {getattr(func, '__qualname__', func)!r}: a "
                "generator or async function runs after the call returns; use `with "
                "tfdiag.max_traces(n):` around where it is iterated or awaited"
            )
        if inspect.isasyncgenfunction(func):
            raise InputError(
                f"max_traces cannot decorate {getattr(func, '__qualname__', func)!r}: an "
                "async generator runs after the call returns; use `with tfdiag.max_traces(n):`"
            )
        return super().__call__(func)

    def _recreate_cm(self) -> max_traces:
        return max_traces(self.n)  # a decorated function's calls each count on their own

    def __enter__(self) -> max_traces:
        try:
            importlib.import_module(_MODULE)
        except ImportError as exc:
            raise TfdiagError(f"max_traces needs TensorFlow: {exc}") from None
        recorder = _BlockRecorder(self)
        if not recorder.watch.__enter__():
            recorder.watch.__exit__(None, None, None)
            raise TfdiagError(
                "max_traces cannot watch TensorFlow's tracer in this version "
                "(tracing_compilation._create_concrete_function is missing)"
            )
        with self._lock:
            self._active.append(recorder)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        mine = [
            r for r in tracer_hook.listeners() if isinstance(r, _BlockRecorder) and r.owner is self
        ]
        with self._lock:
            if mine:
                recorder = mine[-1]
                self._active.remove(recorder)
            elif self._active:  # ended in another thread than it started in
                recorder = self._active.pop()
            else:
                raise TfdiagError("max_traces: a block ended that was never started")
        nested = bool(mine) and tracer_hook.innermost(recorder, _BlockRecorder)
        if mine and not nested:  # the blocks opened after it overlap it: neither is checked
            later = tracer_hook.listeners()
            for r in later[later.index(recorder) + 1 :]:
                if isinstance(r, _BlockRecorder):
                    r.overlapped = True
        recorder.watch.__exit__(None, None, None)
        if exc_type is not None:
            return
        if not mine:
            raise TfdiagError(
                "max_traces: a block ended in another thread than it started in, so the "
                "traces of its own thread cannot be counted; start and end it in one thread"
            )
        if not nested or recorder.overlapped:
            raise TfdiagError(_OVERLAP)
        found = _retraced(recorder, self.n)
        if found:
            raise TooManyTraces(_message(self.n, found, recorder.dropped), self.n, found)
