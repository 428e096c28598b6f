"""The JAX profiler probe: on Keras' JAX backend, the observe pass's traced block.

The same session as :class:`tfdiag.capture.tfprofiler.TfTrace` (``create``, ``begin``,
``step``, ``stop``, ``read``, ``abort``), with ``jax.profiler.start_trace``/``stop_trace``:
the XSpace it writes (``plugins/profile/*/*.xplane.pb``) is read by
:mod:`tfdiag.analysis.xspace` without TensorFlow, and the temporary logdir is removed.
Bounded as the TF block is: the same few steps (:func:`tfdiag.capture.observe.traced_steps`),
host tracer level 1 and no Python tracer (with it, jax 0.10 writes an event per Python call:
11k events for three small ``predict`` calls, the trace 0.22 s instead of 0.06 s).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from tfdiag.analysis.xspace import STEP_NAME, XspaceFormatError, jax_profile_from_xspaces
from tfdiag.capture.native_log import quiet
from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.jax_profile import JaxProfile
from tfdiag.records.scratch import scratch_path

HOST_TRACER_LEVEL = 1
TraceFiles = tuple[tuple[str, bytes], ...]


class JaxTrace:
    """One ``jax.profiler`` session over a block of steps."""

    def __init__(self, profiler: Any) -> None:
        self.profiler = profiler
        self.logdir: Path | None = None
        self.running = False

    @classmethod
    def create(cls) -> JaxTrace:
        """Raises:
        ProbeError: JAX is missing."""
        try:
            import jax.profiler
        except ImportError:
            raise ProbeError("JAX is not installed: JAX profiler pass skipped") from None
        return cls(jax.profiler)

    def begin(self) -> None:
        """Make the logdir and start the trace (inside the block that calls :meth:`abort`);
        whatever stops it once the folder's name is chosen removes the folder (as
        :meth:`tfdiag.capture.tfprofiler.TfTrace.begin`).

        Raises:
            ProbeError: another trace is running, or the folder cannot be made.
        """
        self.logdir = scratch_path("jaxtrace")
        try:
            self._start()
        except BaseException:
            self.abort()
            raise

    def _start(self) -> None:
        assert self.logdir is not None
        try:
            self.logdir.mkdir(mode=0o700)
        except OSError as exc:
            self.logdir = None
            raise ProbeError(f"cannot create the trace folder ({exc.strerror or exc})") from None
        options = self.profiler.ProfileOptions()
        options.host_tracer_level = HOST_TRACER_LEVEL
        options.python_tracer_level = 0
        self.running = True
        try:
            with quiet():
                self.profiler.start_trace(str(self.logdir), profiler_options=options)
        except Exception as exc:
            self.running = False
            busy = "already" in str(exc).lower()
            raise ProbeError(
                "another JAX profiler trace is running in this process (yours?): it was left "
                "running and the JAX profiler pass skipped"
                if busy
                else f"the JAX profiler did not start ({type(exc).__name__}: {exc})"
            ) from None

    def step(self, i: int) -> AbstractContextManager[Any]:
        return self.profiler.StepTraceAnnotation(STEP_NAME, step_num=i)  # type: ignore[no-any-return]

    def stop(self, clock: Clock = time.perf_counter) -> float:
        """End the trace and write it; returns how long that took.

        Raises:
            ProbeError: the trace could not be written.
        """
        t0 = clock()
        self.running = False
        try:
            with quiet():
                self.profiler.stop_trace()
        except Exception as exc:
            self.cleanup()  # a trace that was not written is never read
            raise ProbeError(f"the JAX profiler could not write its trace ({exc})") from None
        except BaseException:
            self.cleanup()
            raise
        return clock() - t0

    def abort(self) -> None:
        """Stop a trace still running and remove the folder (even on a second Ctrl-C)."""
        try:
            if self.running:
                self.running = False
                try:
                    with quiet():
                        self.profiler.stop_trace()
                except Exception:  # never mask the user's exception
                    pass
        finally:
            self.cleanup()

    def cleanup(self) -> None:
        if self.logdir is not None:
            shutil.rmtree(self.logdir, ignore_errors=True)

    def read(self, times: Sequence[float], export_s: float) -> tuple[JaxProfile, TraceFiles]:
        """The record of the traced steps and the trace files; removes the logdir.

        Raises:
            ProbeError: no trace was written, or it could not be read.
        """
        if self.logdir is None:
            raise ProbeError("the JAX profiler never started")
        try:
            paths = sorted(self.logdir.glob("plugins/profile/*/*.xplane.pb"))
            if not paths:
                raise ProbeError("the JAX profiler wrote no trace")
            files = tuple((str(p.relative_to(self.logdir)), p.read_bytes()) for p in paths)
            try:
                record = jax_profile_from_xspaces([d for _, d in files], times, export_s)
            except XspaceFormatError as exc:
                raise ProbeError(f"the JAX trace could not be read ({exc})") from None
            return record, files
        finally:
            self.cleanup()
