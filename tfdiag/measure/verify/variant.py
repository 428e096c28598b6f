"""The types of the fixes table: a :class:`Variant` (one mechanical fix of one finding) and
what its ``prepare`` builds (:class:`Built`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfdiag.capture.environment import running_backend
from tfdiag.measure.verify.call import Call
from tfdiag.records.catalog.backends import DEFAULT, JAX, MEASURED
from tfdiag.records.verification import FIX

#: The backends of a variant written in Keras' own API (a clone, its calls, the
#: ``tf.data.Dataset`` Keras is given): every one ``verify`` measures on.
EVERY_BACKEND: frozenset[str] = MEASURED
#: A TensorFlow rewrite's (``tf.function``, tf.data): the default backend's only.
DEFAULT_ONLY: frozenset[str] = frozenset({DEFAULT.name})
#: A ``jax.jit`` rewrite's: JAX's only.
JAX_ONLY: frozenset[str] = frozenset({JAX.name})

INFERENCE, TRAINING = "inference", "training"

#: Keras' defaults of the arguments a variant may not reproduce: given so, they ask for
#: nothing (``fit(..., validation_split=0.0, initial_epoch=0)`` validates nothing).
_DEFAULTS: dict[str, object] = {
    "validation_split": 0.0,
    "initial_epoch": 0,
    "validation_freq": 1,
    "reset_metrics": True,
    "return_dict": False,
}


def _default(name: str, value: object) -> bool:
    if value is None or (isinstance(value, (list, tuple, dict)) and not value):
        return True
    if name not in _DEFAULTS or isinstance(value, bool) != isinstance(_DEFAULTS[name], bool):
        return False
    return bool(value == _DEFAULTS[name])


class NotApplicable(Exception):
    """Raised by ``prepare`` when the variant cannot be built for this call (the reason)."""


@dataclass
class Built:
    """A variant ready to time.

    Attributes:
        run: one call of the variant.
        result: inference: its output, run untimed after timing (compared with the
            baseline's); training: unused.
        units: how many of the baseline's calls one ``run`` does the work of (one ``predict``
            over 8 batches: 8); its times are divided by it.
        fix: the code that was run, as the user would write it.
        expected: turns the baseline's output into what this variant must return (one
            ``predict`` over 8 copies of x returns the baseline's output 8 times).
        loss: training: the loss of the variant's model on the call's data (evaluate).
        note: what the user should know about how it was measured.
    """

    run: Callable[[], Any]
    fix: str
    result: Callable[[], Any] | None = None
    units: int = 1
    expected: Callable[[Any], Any] | None = None
    loss: Callable[[], float] | None = None
    note: str | None = None


@dataclass(frozen=True)
class Variant:
    """One mechanical fix: when it applies to a call (``applies`` returns None, or the reason
    it does not) and how to build it on that call.

    ``reproduces``: the call's arguments the variant does the same with (the work it stands
    for); ``None``: it passes every argument of the call through. A call that gives any other
    argument (``validation_data=``, ``sample_weight=``, ``callbacks=``) is not what the
    variant runs, so it does not apply: verified means the same work, faster.
    """

    name: str
    kind: str
    applies: Callable[[Call], str | None]
    prepare: Callable[[Call], Built]
    role: str = FIX
    about: str = ""
    reproduces: frozenset[str] | None = None
    #: The Keras backends it is built for (a ``tf.function`` or tf.data rewrite is
    #: TensorFlow's; on another backend it does not apply, so TensorFlow is never loaded).
    backends: frozenset[str] = DEFAULT_ONLY
    #: The variant doing the same on the other backend (``tf.function`` ↔ a ``jax.jit`` of
    #: ``stateless_call``): where that one is measured, this one is not named at all.
    twin: str | None = None

    def elsewhere(self) -> bool:
        """Built for another backend than the process's, with a twin measured instead."""
        return self.twin is not None and running_backend() not in self.backends

    def dropped(self, call: Call) -> tuple[str, ...]:
        """The call's arguments this variant would not reproduce (an argument given as its
        default — None, an empty list, ``validation_split=0.0`` — asks for nothing)."""
        if self.reproduces is None or call.named is None:
            return ()
        return tuple(
            k for k, v in call.named.items() if k not in self.reproduces and not _default(k, v)
        )

    def why_not(self, call: Call) -> str | None:
        """Why the variant does not apply to ``call`` (None: it does)."""
        backend = running_backend()  # tf_keras alone runs on TensorFlow
        if backend not in self.backends:
            if DEFAULT.name in self.backends:
                return f"a {DEFAULT.label} rewrite: not measured on Keras' {backend} backend yet"
            return f"built for Keras' {' / '.join(sorted(self.backends))} backend, not {backend}"
        why = self.applies(call)
        if why is not None:
            return why
        dropped = self.dropped(call)
        if dropped:
            return f"it does not reproduce {', '.join(f'{k}=' for k in dropped)} of the call"
        return None
