"""The timed pass's probes, behind one protocol, for the three drivers (``profile()``,
``ProfileCallback``, ``tfdiag run``).

A driver times calls with no profiler attached (the observe pass, a fit's timeline batches,
a script site's plain calls). Around them it runs one :class:`TimedProbes`: every probe of
:data:`TIMED_PROBES` that applies (:meth:`TimedProbe.applies`) is started once, told when a
timed call starts and ends (``before_call``/``after_call``, outside the call's timing),
paused while the driver's calls are not the timed pass's (profiled, traced), stopped once,
and its record is the report field :attr:`TimedProbe.field` names. The traced block beside
them is :mod:`tfdiag.capture.trace_block`'s.

A new timed probe is one class here with the :class:`TimedProbe` methods (its measurement
in its own module) and one line in :data:`TIMED_PROBES`; its record is a report field.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Protocol

from tfdiag.capture.environment import keras_backend
from tfdiag.capture.machine import LoadProbe
from tfdiag.capture.pycalls import CallbackRecorder, Sink, install
from tfdiag.capture.sampling import ThreadSampler, start
from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError


class TimedProbe(Protocol):
    """What the timed calls record beside their times (Python callbacks, machine load)."""

    #: The report field (:class:`~tfdiag.records.report.RunRecord`) its record fills.
    field: str

    def applies(self, backend: str | None) -> bool:
        """Whether it runs on this Keras 3 backend (None: no Keras 3 loaded)."""
        ...

    def start(self) -> None:
        """Hook in, before the first timed call. Raises ProbeError when it cannot (a note)."""
        ...

    def before_call(self, i: int) -> None:
        """Timed call ``i`` starts (drivers whose calls are not back to back say so)."""
        ...

    def after_call(self, i: int) -> None:
        """Timed call ``i`` ended: outside its timing."""
        ...

    def pause(self, paused: bool) -> None:
        """The driver's calls are not timed ones (profiled, traced) while ``paused``."""
        ...

    def stop(self) -> None:
        """Unhook; safe whether or not :meth:`start` got far."""
        ...

    def record(self) -> Any:
        """What it recorded (after :meth:`stop`)."""
        ...


@dataclass
class TimedContext:
    """What the probes are made with: the driver's clock, the timed calls' times as the
    driver appends them, whether the stack sampler was asked for, and how the
    Python-callback hook is installed (``tfdiag run`` routes one script-wide hook)."""

    clock: Clock = time.perf_counter
    times: list[float] = field(default_factory=list)
    sampling: bool = False
    hook: Callable[[Sink], Callable[[], None] | None] = install


class PyCallbackProbe:
    """Every call TensorFlow makes back into Python (``py_function``, a generator), timed
    (:mod:`tfdiag.capture.pycalls`)."""

    field = "py_callbacks"

    def __init__(self, ctx: TimedContext) -> None:
        self.recorder = CallbackRecorder(ctx.clock)
        self._hook = ctx.hook
        self._restore: Callable[[], None] | None = None

    def applies(self, backend: str | None) -> bool:
        return True  # a no-op where TensorFlow is not loaded

    def start(self) -> None:
        self._restore = self._hook(self.recorder)

    def before_call(self, i: int) -> None:
        pass

    def after_call(self, i: int) -> None:
        pass

    def pause(self, paused: bool) -> None:
        self.recorder.active = not paused

    def stop(self) -> None:
        restore, self._restore = self._restore, None
        if restore is not None:
            restore()

    def record(self) -> Any:
        return self.recorder.records()


class MachineLoadProbe:
    """How busy other processes kept the CPUs, one window per timed call
    (:mod:`tfdiag.capture.machine`)."""

    field = "machine"

    def __init__(self, ctx: TimedContext) -> None:
        self.load = LoadProbe()

    def applies(self, backend: str | None) -> bool:
        return True  # a no-op where /proc/stat cannot be read

    def start(self) -> None:
        pass

    def before_call(self, i: int) -> None:
        self.load.mark()

    def after_call(self, i: int) -> None:
        self.load.tick()

    def pause(self, paused: bool) -> None:
        pass

    def stop(self) -> None:
        pass

    def record(self) -> Any:
        return self.load.record()


class SamplingProbe:
    """The caller's Python stack, sampled from a thread (:mod:`tfdiag.capture.sampling`),
    when asked for (``profile(sampling=True)``)."""

    field = "sampling"

    def __init__(self, ctx: TimedContext) -> None:
        self.ctx = ctx
        self.sampler = ThreadSampler(clock=ctx.clock)

    def applies(self, backend: str | None) -> bool:
        return self.ctx.sampling

    def start(self) -> None:
        start(self.sampler)

    def before_call(self, i: int) -> None:
        pass

    def after_call(self, i: int) -> None:
        pass

    def pause(self, paused: bool) -> None:
        pass

    def stop(self) -> None:
        self.sampler.stop()

    def record(self) -> Any:
        return self.sampler.record(tuple(self.ctx.times))


#: Every timed probe, in the order they start (and the reverse of the order they stop):
#: one line per probe.
TIMED_PROBES: tuple[Callable[[TimedContext], TimedProbe], ...] = (
    SamplingProbe,
    PyCallbackProbe,
    MachineLoadProbe,
)

#: How the notes name a probe that could not start.
_NAMES = {"sampling": "sampling", "py_callbacks": "Python-callback", "machine": "machine-load"}


class TimedProbes:
    """One of each timed probe that applies on the backend when it is made: ``start()``
    once (a Ctrl-C as it starts stops what started), ``before_call(i)``/``after_call(i)``
    around each timed call, ``pause(True/False)`` around the calls that are not, ``stop()``
    once, always; then ``records()``, by report field."""

    def __init__(
        self,
        ctx: TimedContext | None = None,
        probes: tuple[Callable[[TimedContext], TimedProbe], ...] | None = None,
    ) -> None:
        self.ctx = ctx if ctx is not None else TimedContext()
        backend = keras_backend()
        made = (make(self.ctx) for make in (TIMED_PROBES if probes is None else probes))
        self.probes: tuple[TimedProbe, ...] = tuple(p for p in made if p.applies(backend))
        self.notes: list[str] = []
        self._started: list[TimedProbe] = []
        self._stopped: list[TimedProbe] = []

    def start(self) -> None:
        try:
            for probe in self.probes:
                try:
                    self._started.append(probe)
                    probe.start()
                except ProbeError as exc:
                    self._started.pop()
                    self.notes.append(f"{_NAMES.get(probe.field, probe.field)} probe: {exc}")
        except BaseException:
            self.stop()
            raise

    def before_call(self, i: int) -> None:
        for probe in self._started:
            probe.before_call(i)

    def after_call(self, i: int) -> None:
        for probe in self._started:
            probe.after_call(i)

    def pause(self, paused: bool = True) -> None:
        for probe in self._started:
            probe.pause(paused)

    def stop(self) -> None:
        """Stop every probe started, the last first (each stops even if another raises)."""
        started, self._started = self._started, []
        self._stopped.extend(started)
        with ExitStack() as stack:
            for probe in started:
                stack.callback(probe.stop)

    def records(self) -> dict[str, Any]:
        """Each started probe's record, by report field (after :meth:`stop`)."""
        return {p.field: p.record() for p in (*self._stopped, *self._started)}
