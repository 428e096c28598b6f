"""One capture session: cProfile and the probes a profiled call attaches, for the three
drivers (``profile()``, ``ProfileCallback``, ``tfdiag run``).

A driver decides which of its calls are cold, profiled, traced or timed; around the
profiled ones it attaches the session (:meth:`CaptureSession.attach` / ``detach``, or the
``attached()`` block), numbers each call (:meth:`CaptureSession.set_call`: 0 is the cold
one) and, for the report, takes every probe's record (:meth:`CaptureSession.records`, one
report field per probe) and notes. Which probes attach is decided by the Keras backend each
time the session attaches (:meth:`Probe.applies`): TensorFlow's tracer never on Keras'
JAX backend; JAX's compile probe wherever the program has imported JAX.

A new probe is one module (a class with the :class:`Probe` methods, its record a report
field) and one line in :data:`PROBES`.
"""

from __future__ import annotations

import cProfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any, Protocol

from tfdiag.capture.environment import keras_backend
from tfdiag.capture.jit import CompileRecorder
from tfdiag.capture.lines import LineSampler
from tfdiag.capture.snapshot import snapshot
from tfdiag.capture.traces import TraceRecorder
from tfdiag.records.clock import Clock
from tfdiag.records.stats import ProfileStats


class Probe(Protocol):
    """What a profiled call records beside cProfile (a graph trace, a JAX compilation)."""

    #: The report field (:class:`~tfdiag.records.report.RunRecord`) its record fills.
    field: str

    def applies(self, backend: str | None) -> bool:
        """Whether it attaches on this Keras 3 backend (None: no Keras 3 loaded)."""
        ...

    def attach(self) -> AbstractContextManager[bool]:
        """Hook in while the block runs; yields whether it could (its framework loaded)."""
        ...

    def set_call(self, i: int) -> None:
        """The profiled call ``i`` starts (0: the cold one): what it records is call ``i``'s."""
        ...

    def record(self, calls: int | None = None) -> Any:
        """What calls ``0`` to ``calls - 1`` recorded (None: all)."""
        ...

    def dropped_note(self) -> str | None:
        """A note when some events were not recorded."""
        ...


#: Every probe a profiled call attaches, in the order they attach: one line per probe.
PROBES: tuple[Callable[[], Probe], ...] = (TraceRecorder, CompileRecorder, LineSampler)


def new_profiler(clock: Clock = time.perf_counter) -> cProfile.Profile:
    """cProfile on ``clock``: its own C timer for the default, the given clock otherwise."""
    return cProfile.Profile() if clock is time.perf_counter else cProfile.Profile(clock)


class CaptureSession:
    """cProfile (``profiler``, enabled by the driver around each call) and one of each
    probe of ``probes`` (None: :data:`PROBES`, read when the session is made)."""

    def __init__(
        self,
        clock: Clock = time.perf_counter,
        probes: Sequence[Callable[[], Probe]] | None = None,
    ) -> None:
        self.profiler = new_profiler(clock)
        self.probes: tuple[Probe, ...] = tuple(make() for make in (probes or PROBES))
        self._stack: ExitStack | None = None

    def snapshot(self) -> ProfileStats:
        """cProfile's table so far."""
        return snapshot(self.profiler)

    def attach(self) -> bool:
        """Attach every probe that applies on the backend now; whether every probe of the
        session is on (False: one may come on later, as when the call imports TensorFlow
        or JAX, or Keras picks its backend, during the cold call). A probe that fails to
        attach is left off: a record, never a reason for the user's call to fail."""
        self.detach()
        stack = ExitStack()
        backend = keras_backend()
        on = 0
        try:
            for probe in self.probes:
                if probe.applies(backend):
                    try:
                        on += bool(stack.enter_context(probe.attach()))
                    except Exception:  # noqa: BLE001 - its framework's internals moved
                        continue
        except BaseException:  # Ctrl-C while attaching: none stays attached
            stack.close()
            raise
        self._stack = stack
        return on == len(self.probes)

    def detach(self) -> None:
        """Unhook every probe :meth:`attach` attached (nothing when none is)."""
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()

    @contextmanager
    def attached(self) -> Iterator[bool]:
        """:meth:`attach` for the block, always detached after it."""
        try:
            yield self.attach()
        finally:
            self.detach()

    def set_call(self, i: int) -> None:
        for probe in self.probes:
            probe.set_call(i)

    def records(self, calls: int | None = None) -> dict[str, Any]:
        """Each probe's record of calls ``0`` to ``calls - 1`` (None: all), by report field."""
        return {probe.field: probe.record(calls) for probe in self.probes}

    def notes(self) -> list[str]:
        """What the probes could not record."""
        return [n for probe in self.probes if (n := probe.dropped_note()) is not None]
