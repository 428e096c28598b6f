"""The tracer of each backend's timed pass: which profiler traces the first block of calls.

One row per backend that has one, by its name in :mod:`tfdiag.records.catalog.backends`:
TensorFlow's profiler (:mod:`tfdiag.capture.tfprofiler`) and ``jax.profiler``
(:mod:`tfdiag.capture.jax_profiler`). A backend without a row is traced with TensorFlow's
when asked (``tf_profiler=True``), and by default with none. Never imports either.
"""

from __future__ import annotations

import sys

from tfdiag.capture.environment import running_backend
from tfdiag.capture.jax_profiler import JaxTrace
from tfdiag.capture.tfprofiler import TfTrace
from tfdiag.records.catalog.backends import DEFAULT, backend_named, profiler_of

#: What the timed pass drives: a session over a block of steps (``create``, ``begin``,
#: ``step(i)``, ``stop``, ``read``, ``abort``).
Tracer = TfTrace | JaxTrace

#: Each backend's tracer.
TRACERS: dict[str, type[Tracer]] = {"tensorflow": TfTrace, "jax": JaxTrace}


def tracer_for(backend: str | None) -> type[Tracer]:
    """The tracer ``tfdiag.profile``'s timed pass tries on Keras 3's ``backend`` (None: no
    Keras 3, a tf_keras or TensorFlow program): its own, else the default backend's (which
    says why it cannot start)."""
    return TRACERS.get(backend or DEFAULT.name) or TRACERS[DEFAULT.name]


def tracer_name(tracer: type[Tracer]) -> str:
    """``TF profiler``, ``JAX profiler``: how notes and reports name ``tracer``."""
    return profiler_of(next((b for b, t in TRACERS.items() if t is tracer), None))


def loaded(tracer: type[Tracer]) -> bool:
    """Whether the process has imported the package ``tracer`` profiles."""
    name = next(b for b, t in TRACERS.items() if t is tracer)
    row = backend_named(name)
    return row is not None and row.module in sys.modules


def tracer_in_use() -> type[Tracer] | None:
    """The tracer on by default: the backend's own when the process computes with it and
    has loaded it. A Keras-on-JAX program that loads TensorFlow for ``tf.data`` (or
    ``clone_model``) is not a TensorFlow program: TensorFlow's hooks stay off there."""
    tracer = TRACERS.get(running_backend())
    return tracer if tracer is not None and loaded(tracer) else None
