"""``tfdiag.max_traces(n)``: fail a block (or a decorated function) that traces any
``tf.function`` more than ``n`` times, naming each one and why it was traced again.

The traces are recorded by :mod:`tfdiag.capture.traces` (every ``tf.function``: the
user's, Keras's, tf.data's) and explained by :mod:`tfdiag.advise.guards`. TensorFlow is
imported when the block starts, never at ``import tfdiag``.

XLA compilations are not counted yet: tfdiag does not record them. When a recorder for
them exists, count its events in :meth:`max_traces._problems` beside the traces.
"""

from __future__ import annotations

import importlib
import inspect
from contextlib import ContextDecorator
from types import TracebackType
from typing import Any

from tfdiag.advise.guards import Retraced, retrace_fix, retraced
from tfdiag.capture.traces import _MODULE, TraceRecorder, recording
from tfdiag.records.errors import InputError, TfdiagError
from tfdiag.records.text import clean


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


class max_traces(ContextDecorator):  # noqa: N801 - used as a function: max_traces(1)
    """Count the graph traces of every ``tf.function`` inside the block; on exit, raise
    :class:`TooManyTraces` when one was traced more than ``n`` times.

    ``n`` is per function (by its source: a function re-made on every call counts as one
    function traced again). A function that creates variables on its first call is traced
    twice by TensorFlow then; that counts once. An exception inside the block passes
    through unchanged, and is not masked by the check. Usable as a decorator
    (``@tfdiag.max_traces(1)``), each call counted on its own::

        with tfdiag.max_traces(1):
            for i in range(5):
                step(tf.constant(i))

    Raises:
        InputError: ``n`` is not a non-negative integer.
        TfdiagError: TensorFlow's tracer cannot be watched (TensorFlow missing, or its
            internals moved): the block does not run unchecked.
        TooManyTraces: on exit, a function was traced more than ``n`` times.
    """

    def __init__(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InputError(f"max_traces takes a number of traces (0 or more), got {n!r}")
        self.n = n
        self._active: list[tuple[TraceRecorder, Any]] = []

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
        recorder = TraceRecorder()
        watch = recording(recorder)
        if not watch.__enter__():
            watch.__exit__(None, None, None)
            raise TfdiagError(
                "max_traces cannot watch TensorFlow's tracer in this version "
                "(tracing_compilation._create_concrete_function is missing)"
            )
        self._active.append((recorder, watch))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        recorder, watch = self._active.pop()
        watch.__exit__(None, None, None)
        if exc_type is not None:
            return
        found = retraced(recorder.events, self.n)
        if found:
            raise TooManyTraces(_message(self.n, found, recorder.dropped), self.n, found)
