"""Custom training loops under ``tfdiag run``: the user's ``tf.function`` steps and the
models the user's code calls eagerly are call sites, as Keras' ``fit``/``predict`` are.

A custom loop spends its time in ``Function.__call__`` (the user's ``@tf.function`` train
step) and in ``Model.__call__`` (an eager forward pass under a ``GradientTape``). Both are
patched for the script's run and always restored; a call is recorded when

- a ``tf.function`` whose Python function is in the user's code is called, or
- a Keras model is called eagerly from a line of the user's code,

and no other recorded call is running on the thread (a step traced inside ``fit``, a model
called while a step traces, a model nested in another: those belong to the outer call).
Every other call goes straight through, at the cost of a thread-local read.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from tfdiag.script.recorder import Recorder

_FUNCTION = "tensorflow.python.eager.polymorphic_function.polymorphic_function"
_CONTEXT = "tensorflow.python.eager.context"
_CALL = "__call__"
#: The site's owner for a tf.function step (``tf.function.train_step``).
STEP_OWNER = "tf.function"


def _step_wrapper(original: Callable[..., Any], recorder: Recorder) -> Callable[..., Any]:
    #: id(Function) → (the Function, kept alive so the id stays its own; its qualname, or
    #: None when its Python function is not the user's)
    known: dict[int, tuple[Any, str | None]] = {}

    def name_of(fn: Any) -> str | None:
        entry = known.get(id(fn))
        if entry is None or entry[0] is not fn:
            py = getattr(fn, "_python_function", None)
            try:
                inner = inspect.unwrap(py) if callable(py) else py
            except ValueError:
                inner = py
            code = getattr(inner, "__code__", None)
            user = code is not None and recorder.sites.is_user(code.co_filename)
            name = str(getattr(inner, "__qualname__", getattr(fn, "__name__", "?")))
            entry = known[id(fn)] = (fn, name if user else None)
        return entry[1]

    def tf_function_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        if recorder.inside:
            return original(fn, *args, **kwargs)
        name = name_of(fn)
        if name is None:
            return original(fn, *args, **kwargs)
        return recorder.call(original, name, fn, args, kwargs, described=fn, owner=STEP_OWNER)

    tf_function_call.__wrapped__ = original  # type: ignore[attr-defined]
    return tf_function_call


def _model_wrapper(
    resolved: Callable[..., Any], recorder: Recorder, eager: Callable[[], bool]
) -> Callable[..., Any]:
    def model_call(model: Any, *args: Any, **kwargs: Any) -> Any:
        if recorder.inside or not eager():
            return resolved(model, *args, **kwargs)
        if not recorder.sites.is_user(sys._getframe(1).f_code.co_filename):
            return resolved(model, *args, **kwargs)
        return recorder.call(resolved, "__call__", model, args, kwargs, described=model)

    model_call.__wrapped__ = resolved  # type: ignore[attr-defined]
    return model_call


@contextmanager
def loops_recorded(classes: Sequence[type], recorder: Recorder) -> Iterator[None]:
    """Patch ``Function.__call__`` and each model class's ``__call__`` for the block."""
    undo: list[tuple[type, str, Any]] = []  # (class, name, what its __dict__ held or None)
    try:
        function = getattr(sys.modules.get(_FUNCTION), "Function", None)
        context = sys.modules.get(_CONTEXT)
        original = vars(function).get("__call__") if function is not None else None
        if function is not None and original is not None:
            setattr(function, _CALL, _step_wrapper(original, recorder))
            undo.append((function, "__call__", original))
        eager: Callable[[], bool] | None = getattr(context, "executing_eagerly", None)
        for cls in classes:
            if eager is None:
                break
            held = cls.__dict__.get("__call__")
            resolved = cls.__call__
            setattr(cls, _CALL, _model_wrapper(resolved, recorder, eager))
            undo.append((cls, "__call__", held))
        yield
    finally:
        for cls, name, held in reversed(undo):
            if held is None:
                delattr(cls, name)
            else:
                setattr(cls, name, held)
