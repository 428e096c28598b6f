"""The profiled call, as verification sees it: the Keras model it belongs to, its data, its
keyword arguments, and what each fixed variant builds on (clones, batches, the module).

Nothing here changes the user's objects: training runs on clones
(:meth:`tfdiag.measure.subject.Subject.copy`), inference reads the model only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tfdiag.capture.environment import describe_value, flavour_of
from tfdiag.capture.facts import _is_model, input_facts
from tfdiag.measure.subject import Subject

#: Positional parameters of the Keras methods verification rewrites, in order.
_POSITIONAL = {
    "predict": ("x", "batch_size", "verbose"),
    "predict_on_batch": ("x",),
    "fit": ("x", "y", "batch_size", "epochs", "verbose"),
    "train_on_batch": ("x", "y"),
    "evaluate": ("x", "y", "batch_size", "verbose"),
    "__call__": ("x",),
}


@dataclass
class Call:
    """``fn(*args, **kwargs)`` as profiled, its arguments by name where it is a Keras method."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    facts: dict[str, str] = field(default_factory=dict)

    @cached_property
    def model(self) -> Any:
        """The Keras model the call is a method of (or the model itself), else None."""
        owner = getattr(self.fn, "__self__", None)
        if owner is not None and _is_model(owner):
            return owner
        return self.fn if _is_model(self.fn) else None

    @property
    def method(self) -> str:
        if self.model is None:
            return ""
        return "__call__" if self.model is self.fn else getattr(self.fn, "__name__", "")

    @property
    def flavour(self) -> str:
        return flavour_of(self.fn)

    @cached_property
    def named(self) -> dict[str, Any] | None:
        """Every argument by name, or None when the call is not one verification knows (a
        positional argument past those it names)."""
        names = _POSITIONAL.get(self.method)
        if names is None or len(self.args) > len(names):
            return None
        return {**dict(zip(names, self.args)), **self.kwargs}

    def arg(self, name: str, default: Any = None) -> Any:
        return (self.named or {}).get(name, default)

    @property
    def x(self) -> Any:
        return self.arg("x")

    @property
    def y(self) -> Any:
        return self.arg("y")

    @property
    def batch_size(self) -> int:
        b = self.arg("batch_size")
        return b if isinstance(b, int) and not isinstance(b, bool) and b > 0 else 32

    def rest(self, *drop: str) -> dict[str, Any]:
        """The named arguments without ``drop`` (and without x and y)."""
        return {k: v for k, v in (self.named or {}).items() if k not in ("x", "y", *drop)}

    @property
    def x_kind(self) -> str:
        """``array`` (NumPy or a tensor), ``tf.data.Dataset``, ``PyDataset``, ``generator``, or
        ``other`` (a list or dict of inputs, anything else)."""
        x = self.x
        found = dict(input_facts("x", x))
        if "x.kind" in found:
            return found["x.kind"]
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            return "array"
        return "other"

    @property
    def x_dtype(self) -> str:
        dtype = getattr(self.x, "dtype", None)
        return str(getattr(dtype, "name", dtype))

    @property
    def arrays(self) -> bool:
        """x (and y, when given) are single arrays: the variants may batch and slice them."""
        return self.x_kind == "array" and (
            self.y is None or (hasattr(self.y, "shape") and hasattr(self.y, "dtype"))
        )

    @cached_property
    def subject(self) -> Subject:
        return Subject(self.model, self.x, self.y, batch_size=self.batch_size, flavour=self.flavour)

    @property
    def tf(self) -> Any:
        return self.subject.tf

    def clone(self, *, run_eagerly: bool | None = None, **compile_changes: Any) -> Any:
        """A compiled copy with the model's weights, compiled like it (its ``run_eagerly``
        unless given) with a fresh optimizer; ``compile_changes`` override its compile config
        (``steps_per_execution=32``)."""
        eager = self.facts.get("run_eagerly") == "True" if run_eagerly is None else run_eagerly
        if not compile_changes:
            return self.subject.copy(compile=True, run_eagerly=eager)
        config = self.subject.compile_config()
        config.update(run_eagerly=eager, **compile_changes)
        clone = self.subject.copy(compile=False)
        clone.compile_from_config(config)
        return clone

    def code(self, target: str = "model", **changes: Any) -> str:
        """The call as code: ``model.predict(x, verbose=0)``, with ``changes`` applied."""
        parts = ["x"] + (["y"] if self.y is not None else [])
        kwargs = {**self.rest(), **changes}
        parts += [f"{k}={_short(v)}" for k, v in kwargs.items()]
        method = "" if self.method == "__call__" else f".{self.method}"
        return f"{target}{method}({', '.join(parts)})"


def _short(value: Any) -> str:
    if isinstance(value, (bool, float)) or value is None:
        return repr(value)
    return describe_value(value)  # bounded: a long string or a huge int is not written out
