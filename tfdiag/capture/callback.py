"""``ProfileCallback`` (``tfdiag.keras``): profile training batches inside a real ``fit()``.

The callback is duck-typed (:mod:`tfdiag.capture.duck_callback`), so one class works in
Keras 3 and tf_keras and this module never imports TensorFlow or Keras; what the fit's
batches say in the report is :mod:`tfdiag.capture.fit_report`'s.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from tfdiag.advise import check_finding_rules
from tfdiag.capture.assemble import build_report, steady_timing
from tfdiag.capture.batch_probes import BatchProbes, BatchRecords
from tfdiag.capture.distribution import distribution_of, tf_profiler_choice
from tfdiag.capture.duck_callback import DuckCallback
from tfdiag.capture.facts import model_facts
from tfdiag.capture.fit_report import batch_notes, fit_call
from tfdiag.capture.lines import caller_line
from tfdiag.capture.lock import PROFILER_LOCK
from tfdiag.capture.plan import MAX_ITERATIONS
from tfdiag.capture.session import CaptureSession
from tfdiag.capture.trace_block import as_probes
from tfdiag.records.catalog import Rule
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.clock import Clock
from tfdiag.records.distributed import MAX_CYCLES, Distribution
from tfdiag.records.errors import InputError
from tfdiag.records.report import CallInfo, report_paths
from tfdiag.records.stats import ProfileStats
from tfdiag.results.report import Report

#: Batch times kept for the timeline; longer fits keep the first ones.
MAX_TIMED_BATCHES = 100_000


def _check_batches(batches: object) -> tuple[int, int]:
    if (
        not isinstance(batches, (tuple, list))
        or len(batches) != 2
        or not all(isinstance(b, int) and not isinstance(b, bool) for b in batches)
    ):
        raise InputError(f"batches must be a pair of integers (first, last), got {batches!r}")
    first, last = batches
    if first < 1 or last <= first:
        raise InputError(f"batches must satisfy 1 <= first < last, got ({first}, {last})")
    if last - first > MAX_ITERATIONS:
        raise InputError(f"batches span more than {MAX_ITERATIONS:,} batches")
    return first, last


class ProfileCallback(DuckCallback):
    """Profile training batches ``first``–``last`` of a ``fit()`` with cProfile.

    ``model.fit(x, y, callbacks=[cb])`` then ``cb.report.show()``. Batches are
    counted from 1 across epochs, as TensorBoard's ``profile_batch`` counts them.
    Batch ``first`` plays the cold call (its table is snapshotted), batches
    ``first + 1``–``last`` are the steady-state iterations; cProfile stays attached
    from the start of batch ``first`` to the end of batch ``last``, so the profile
    holds everything ``fit`` did in between (the step, the data iterator, every
    callback). Every other batch of the fit is timed with no profiler attached,
    for the timeline. The batches right after ``last`` (up to 5) run under the
    TF profiler (``jax.profiler`` on Keras' JAX backend), which sees tf.data's threads and
    the step waiting for input (on JAX, XLA's ops); every call TensorFlow makes back into
    Python (``py_function``, a generator) is timed, and the machine's load read, over the
    timeline's batches. Works with Keras 3 and tf_keras.

    Args:
        batches: ``(first, last)``, both included.
        save: also save the report here when ``fit`` ends (``.tfdiag.json`` + ``.prof``).
        overwrite: replace an existing saved report.
        rules: extra culprit rules, tried before the built-in catalog.
        findings: your own findings (:class:`tfdiag.FindingRule`), run after the built-in ones.
        tf_profiler: trace the batches after ``last`` with the running backend's profiler
            (TensorFlow's; ``jax.profiler`` on Keras' JAX backend); None (default): when
            that backend's package is imported.
        clock: the timer every batch time and the profile read (``time.perf_counter``).

    Attributes:
        report: the :class:`~tfdiag.records.report.Report` of the last ``fit``, or None.

    Raises:
        InputError: bad ``batches``, or ``save`` exists and ``overwrite`` is False.
    """

    def __init__(
        self,
        batches: tuple[int, int] = (10, 30),
        *,
        save: str | Path | None = None,
        overwrite: bool = False,
        rules: Iterable[Rule] = (),
        findings: Iterable[FindingRule] = (),
        tf_profiler: bool | None = None,
        clock: Clock = time.perf_counter,
    ) -> None:
        super().__init__()
        self.batches = _check_batches(batches)
        if tf_profiler is not None and not isinstance(tf_profiler, bool):
            raise InputError(f"tf_profiler must be True, False or None, got {tf_profiler!r}")
        self.tf_profiler = tf_profiler
        self.clock = clock
        self.rules = tuple(rules)
        if not all(isinstance(r, Rule) for r in self.rules):
            raise InputError("rules must be tfdiag.Rule objects")
        self.finding_rules = check_finding_rules(findings)
        self.save_path = Path(save) if save is not None else None
        self.overwrite = overwrite
        if self.save_path is not None and not overwrite:
            taken = [p for p in report_paths(self.save_path) if p.exists()]
            if taken:
                raise InputError(f"{taken[0]} exists; pass overwrite=True to replace it")
        self.report: Report | None = None
        #: Where the report says it came from; ``tfdiag run``'s subclass says "script".
        self.source = "keras-callback"
        #: True when the driver holds the profiler lock for this fit (``tfdiag run``).
        self._lock_held = False
        #: False: no warning when no report could be made (the driver falls back).
        self._warn = True
        self._reset()

    def _reset(self) -> None:
        self._count = 0
        self._t0 = 0.0
        self._fit_line: tuple[str, int, str] = ("", 0, "")
        self._facts: tuple[tuple[str, str], ...] = ()
        #: cProfile and the probes of the profiled batches; ``_profiling`` while attached.
        self._session: CaptureSession | None = None
        self._profiling = False
        self._cold: ProfileStats | None = None
        self._stats: ProfileStats | None = None
        self._profiled_s: list[float] = []
        self._timed_s: list[float] = []
        self._dropped = 0
        self._failed: str | None = None
        self._ended: str | None = None
        self._train_function: Callable[..., Any] | None = None
        self._probes: BatchProbes | None = None
        self._tracing = False
        self._traced = 0
        # tf.distribute: the strategy, and each timed batch's cycle and step-function time.
        self._dist: Distribution | None = None
        self._cycle_s: list[float] = []
        self._step_fn_s: list[float] = []
        self._fn_s: float | None = None
        self._begin: float | None = None
        self._plain = False
        self._tf_note: str | None = None

    # -- Keras hooks that matter -----------------------------------------------------

    def on_train_begin(self, logs: Any = None) -> None:
        self.close()
        self._reset()
        self.report = None
        self._fit_line = caller_line()  # the user's `fit(...)` line
        self._facts = tuple(model_facts(self.model))  # run_eagerly, dynamic, its metrics
        fn: Any = getattr(self.model, "train_function", None)
        while hasattr(fn, "__tfdiag_step__"):  # left by a fit that another callback aborted
            fn = fn.__tfdiag_step__
        if callable(fn):
            self._train_function = fn
            self.model.train_function = self._guarded(fn)
        self._dist = distribution_of(self.model)
        want_tf, self._tf_note = tf_profiler_choice(self.tf_profiler, self._dist)
        self._probes = BatchProbes(tf_profiler=want_tf, clock=self.clock)
        self._probes.start()

    def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
        self._cycle()
        self._count += 1
        first, last = self.batches
        probes = self._probes
        session = self._session
        if self._profiling and session is not None:
            session.set_call(self._count - first)  # the profiled batches' index, as profile()'s
        if self._count == first:
            reason = None if self._lock_held else PROFILER_LOCK.try_acquire()
            if reason is None:
                if probes is not None:
                    probes.pause()
                self._session = session = CaptureSession(self.clock)
                self._profiling = True
                session.attach()  # batch ``first`` is call 0, the cold one
                self._t0 = self.clock()
                session.profiler.enable()
                return
            self._failed = reason
        elif self._count == first + 1 and self._profiling and session is not None:
            session.profiler.disable()
            self._cold = session.snapshot()
            session.profiler.enable()
        elif self._count > last and probes is not None:
            self._tracing = probes.begin()
            if self._tracing:  # the hook counts the timeline's batches, as profile()'s does
                probes.pause()
        if probes is not None and not self._tracing and not self._profiling:
            # Not under cProfile: the probes' reads are tfdiag's, not the user's callbacks'.
            probes.timed_begin(len(self._timed_s))
        self._t0 = self.clock()

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        elapsed = self.clock() - self._t0
        if self._profiling:
            self._profiled_s.append(elapsed)
            if self._count == self.batches[1]:
                self._detach()
            return
        if self._tracing and self._probes is not None:  # not timeline: the profiler is on
            self._tracing = False
            self._traced += 1
            self._probes.end(elapsed)
            self._probes.resume()
            return
        if len(self._timed_s) < MAX_TIMED_BATCHES:
            self._timed_s.append(elapsed)
            if self._probes is not None:  # one window per timed batch, as the timeline reads
                self._probes.timed_end(len(self._timed_s) - 1)
        else:
            self._dropped += 1
        self._plain = True

    def on_train_end(self, logs: Any = None) -> None:
        self._finish()

    def close(self) -> Report | None:
        """Detach the profiler and restore the model's step if a ``fit`` left them.

        ``fit`` does this itself when it ends or its step raises; call ``close()``
        after a ``fit`` that another callback aborted inside the profiled batches.
        """
        if self._profiling or self._train_function is not None or self._probes:
            self._finish()
        return self.report

    # -- internals -------------------------------------------------------------------

    def _call_info(self, own: CallInfo) -> CallInfo:
        """The call the report describes (a driver that knows the call's arguments says so)."""
        return own

    def _lead_notes(self) -> list[str]:
        """Notes a driver puts first (how it ran the callback)."""
        return []

    def _cycle(self) -> None:
        """A batch starts: the last one's cycle (start to start) and step-function time, when
        it was timed with no profiler attached and the job is distributed."""
        now = self.clock()
        if (
            self._dist is not None
            and self._plain
            and self._begin is not None
            and self._fn_s is not None
            and len(self._cycle_s) < MAX_CYCLES
        ):
            self._cycle_s.append(now - self._begin)
            self._step_fn_s.append(self._fn_s)
        self._begin, self._plain, self._fn_s = now, False, None

    def _guarded(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The model's step, timed; detaching the profiler if it raises (fit is aborting)."""

        def train_function(*args: Any, **kwargs: Any) -> Any:
            t0 = self.clock()
            try:
                out = fn(*args, **kwargs)
            except BaseException as exc:
                if _end_of_data(exc):
                    # How Keras ends an epoch over a dataset of unknown length: it catches
                    # this and calls on_train_end; the batches before were whole.
                    self._ended = f"the dataset ran out at batch {self._count} (the epoch's end)"
                    raise
                self._failed = f"fit raised {type(exc).__name__} at batch {self._count}"
                self._finish()
                raise
            self._fn_s = self.clock() - t0
            return out

        train_function.__tfdiag_step__ = fn  # type: ignore[attr-defined]
        return train_function

    def _detach(self) -> None:
        session = self._session
        if not self._profiling or session is None:
            return
        self._profiling = False
        session.profiler.disable()
        session.detach()
        self._stats = session.snapshot()
        if not self._lock_held:
            PROFILER_LOCK.release()
        if self._probes is not None:
            self._probes.resume()

    def _finish(self) -> None:
        self._detach()
        if self._train_function is not None:
            if self.model is not None:
                self.model.train_function = self._train_function
            self._train_function = None
        probes, self._probes = self._probes, None
        found = BatchRecords()
        if probes is not None:
            found = probes.finish(failed=self._failed is not None)
        self.report = self._build(probes, found)
        if self.report is None and self._warn:
            first, last = self.batches
            reason = self._failed or f"fit ran {self._count} batch(es)"
            warnings.warn(
                f"tfdiag: no report for batches {first}–{last} ({reason}; at least the "
                "first two of them must run)",
                RuntimeWarning,
                stacklevel=3,
            )
        elif self.report is not None and self.save_path is not None:
            try:
                self.report.save(self.save_path, overwrite=self.overwrite)
            except InputError as exc:  # never abort the user's training over a file
                warnings.warn(f"tfdiag: report not saved: {exc}", RuntimeWarning, stacklevel=3)

    def _build(self, probes: BatchProbes | None, found: BatchRecords) -> Report | None:
        profiled = self._profiled_s
        if self._stats is None or self._cold is None or len(profiled) < 2:
            return None
        first, last = self.batches
        session = self._session
        notes = [
            *self._lead_notes(),
            *batch_notes(
                self.batches,
                profiled=len(profiled),
                timed=len(self._timed_s),
                traced=self._traced,
                dropped=self._dropped,
                stopped=self._failed or self._ended,
                tf_recorded=found.trace is not None,
                tf_wanted=probes is not None and probes.want_trace,
                tracer=probes.block.name if probes is not None else None,
            ),
            *(probes.notes if probes is not None else ()),
            *(session.notes() if session is not None else ()),
            *([self._tf_note] if self._tf_note else ()),
        ]
        return build_report(
            call=self._call_info(
                fit_call(self.model, self.batches, self.params, self._facts, self._fit_line)
            ),
            timing=steady_timing(profiled, self._timed_s),
            profile=self._stats,
            cold=self._cold,
            rules=self.rules,
            finding_rules=self.finding_rules,
            notes=notes,
            source=self.source,
            partial=first + len(profiled) - 1 < last,  # fit ended before batch last
            probes=as_probes(found.trace, found.trace_files),
            **(found.timed or {}),
            distribution=(
                None
                if self._dist is None
                else replace(
                    self._dist, cycle_s=tuple(self._cycle_s), step_fn_s=tuple(self._step_fn_s)
                )
            ),
            **(session.records(len(profiled)) if session is not None else {}),
        )


def _end_of_data(exc: BaseException) -> bool:
    """The step's input ran out: ``StopIteration`` or TensorFlow's ``OutOfRangeError``, which
    Keras catches to end the epoch (not a failure of the step)."""
    if isinstance(exc, StopIteration):
        return True
    cls = type(exc)
    return cls.__name__ == "OutOfRangeError" and cls.__module__.startswith("tensorflow")
