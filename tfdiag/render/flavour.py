"""The ``flavour`` line of a report's header: which Keras, on which backend."""

from __future__ import annotations

from tfdiag.records.catalog.backends import label_of
from tfdiag.records.report import CallInfo, Environment

_FLAVOURS = {"keras3": "Keras 3", "tf_keras": "tf_keras (legacy Keras 2)"}


def flavour_label(call: CallInfo, env: Environment) -> str:
    """``Keras 3 on JAX``, ``tf_keras (legacy Keras 2)``, ``python``: the call's Keras and,
    for Keras 3, the backend it ran on (when the report recorded it)."""
    label = _FLAVOURS.get(call.flavour, call.flavour)
    if env.backend and call.flavour in ("keras3", "python", "unknown"):
        backend = f"Keras 3 on {label_of(env.backend)}"
        return backend if call.flavour == "keras3" else f"{label} · {backend}"
    return label
