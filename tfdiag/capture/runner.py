"""The passes of ``tfdiag.profile`` (:func:`profile_call`): run a call under cProfile, then
time it with no profiler attached (:mod:`tfdiag.frontends.api` puts verification after them).

Every pass reads one injectable clock (``time.perf_counter`` by default); cProfile
reads it too when it is not the default, so a test on a fake clock gets exact
per-function and per-iteration times.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable
from typing import Any

from tfdiag.advise import check_finding_rules
from tfdiag.capture.assemble import build_report, steady_timing
from tfdiag.capture.ctrl_c import CtrlC
from tfdiag.capture.environment import describe_call
from tfdiag.capture.lock import PROFILER_LOCK
from tfdiag.capture.observe import READING, Observation, observe, traced_steps
from tfdiag.capture.plan import (
    MIN_PROFILED,
    check_iterations,
    probe_flag,
    profiled_iterations,
)
from tfdiag.capture.session import CaptureSession
from tfdiag.capture.tracers import tracer_in_use
from tfdiag.records.catalog import Rule
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.clock import Clock, Progress
from tfdiag.records.errors import InputError, ProfilerBusyError
from tfdiag.records.probes import Probes
from tfdiag.records.stats import ProfileStats
from tfdiag.results.report import Report


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during ``profile()``: the profilers are detached and, when at least the cold
    call finished, ``report`` holds what was measured so far (``report.partial`` is true).

    A subclass of KeyboardInterrupt, so a script that does not catch it still stops.
    """

    def __init__(self, message: str, report: Report | None = None) -> None:
        super().__init__(message)
        self.report = report


def profile_call(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    iterations: int = 20,
    rules: Iterable[Rule] = (),
    findings: Iterable[FindingRule] = (),
    sampling: bool | None = None,
    tf_profiler: bool | None = None,
    clock: Clock = time.perf_counter,
    on_step: Progress | None = None,
    ctrl_c: CtrlC | None = None,
) -> Report:
    """:func:`tfdiag.profile`'s passes, with the arguments as a tuple and a dict, and the
    clock injectable.

    Every time in the report — cProfile's, the timed pass's, the probes' — is read
    from ``clock``; a fake clock makes them exact in tests. ``on_step(done, total, label)``
    is called after each call, outside its timing and with cProfile off, and before the
    TF profiler's trace is read. ``ctrl_c``: the caller's Ctrl-C guard (it restores it);
    None: one of its own for this call.
    """
    kwargs = dict(kwargs or {})
    if not callable(fn):
        raise InputError(f"expected a callable such as model.predict, got {type(fn).__name__}")
    if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn):
        raise InputError(
            f"{getattr(fn, '__name__', 'fn')} is a generator or async function: calling it does "
            "not run its body; profile a function that does the work"
        )
    n = check_iterations(iterations)
    rules = tuple(rules)
    if not all(isinstance(r, Rule) for r in rules):
        raise InputError("rules must be tfdiag.Rule objects")
    finding_rules = check_finding_rules(findings)
    want_sampling = probe_flag(sampling, "sampling")
    want_tf = probe_flag(tf_profiler, "tf_profiler")
    # _Run describes the call: user code (a __repr__) may raise
    run = _Run(fn, args, kwargs, n, clock, on_step)
    reason = PROFILER_LOCK.try_acquire()
    if reason is not None:
        raise ProfilerBusyError(reason)
    if ctrl_c is not None:
        return _passes(run, rules, finding_rules, want_sampling, want_tf, ctrl_c)
    own = CtrlC.install()
    try:
        return _passes(run, rules, finding_rules, want_sampling, want_tf, own)
    finally:
        own.restore()


def _passes(
    run: _Run,
    rules: tuple[Rule, ...],
    finding_rules: tuple[FindingRule, ...],
    want_sampling: bool | None,
    want_tf: bool | None,
    ctrl_c: CtrlC,
) -> Report:
    """Both passes and the report, with the profiler lock held: the first Ctrl-C stops the
    passes; later presses (a burst) are noted while the partial report is assembled."""
    try:
        run.profiled_pass()
        run.observe_pass(
            sampling=want_sampling is True,
            tf_profiler=want_tf if want_tf is not None else tracer_in_use() is not None,
        )
    except KeyboardInterrupt:
        ctrl_c.disarm()
        PROFILER_LOCK.release()
        if run.cold is None:
            raise Interrupted("interrupted during the first call: nothing to report") from None
        report = run.report(rules, finding_rules, partial=True)
        raise Interrupted(
            f"interrupted: {report.notes[-1]}; the partial report is this exception's .report",
            report,
        ) from None
    except BaseException:
        PROFILER_LOCK.release()
        raise
    ctrl_c.disarm()
    PROFILER_LOCK.release()
    report = run.report(rules, finding_rules, partial=False)
    if ctrl_c.noted:
        raise Interrupted("interrupted as the run finished: the report is complete", report)
    return report


class _Run:
    """The passes of one ``profile()`` call and what each has measured so far."""

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        n: int,
        clock: Clock,
        on_step: Progress | None = None,
    ) -> None:
        self.fn, self.args, self.kwargs, self.n, self.clock = fn, args, kwargs, n, clock
        self.p = profiled_iterations(n)
        self.on_step, self.steps, self.done = on_step, 1 + self.p + n, 0
        self.call = describe_call(fn, args, kwargs)
        self.session = CaptureSession(clock)
        self.profiled: list[float] = []
        self.cold: ProfileStats | None = None
        self.observed = Observation()

    def profiled_pass(self) -> None:
        """The cold call and P iterations under cProfile, snapshotted after the cold call;
        the session's probes (graph traces, JAX compilations) record while they run."""
        session = self.session
        profiler = session.profiler
        try:  # Python 3.12+ says so here when another profiling tool holds sys.monitoring
            profiler.enable()
        except ValueError as exc:
            raise ProfilerBusyError(f"another profiler is attached ({exc})") from None
        profiler.disable()
        try:
            with session.attached() as complete:
                self._profiled_call(0)
                if complete:
                    self._profiled_calls()
            if not complete:  # TF or JAX came in during the cold call: from now on
                with session.attached():
                    self._profiled_calls()
        finally:
            profiler.disable()

    def _profiled_calls(self) -> None:
        for i in range(1, self.p + 1):
            self._profiled_call(i)

    def _profiled_call(self, i: int) -> None:
        self.session.set_call(i)
        profiler = self.session.profiler
        t0 = self.clock()
        profiler.enable()
        self.fn(*self.args, **self.kwargs)
        profiler.disable()
        self.profiled.append(self.clock() - t0)
        if i == 0:
            self.cold = self.session.snapshot()
        if self.on_step is not None:
            self.tick(f"profiled {i}/{self.p}" if i else "cold call")

    def tick(self, label: str) -> None:
        """One step done (a call, or the trace about to be read): the progress callback."""
        if self.on_step is None:
            return
        if label == READING:
            self.steps += 1
        elif label == "timed":
            label = f"timed {len(self.observed.times)}/{self.steps - 1 - self.p}"
        self.done += 1
        self.on_step(self.done, self.steps, label)

    def observe_pass(self, *, sampling: bool, tf_profiler: bool) -> None:
        """N plain iterations without cProfile, after a block TF-profiled (when asked); the
        sampler watches them all."""
        if tf_profiler and self.on_step is not None:
            self.steps += traced_steps(self.n)
        observe(
            self.fn,
            self.args,
            self.kwargs,
            self.n,
            sampling=sampling,
            tf_profiler=tf_profiler,
            clock=self.clock,
            into=self.observed,
            tick=None if self.on_step is None else self.tick,
        )

    def report(
        self, rules: tuple[Rule, ...], finding_rules: tuple[FindingRule, ...], *, partial: bool
    ) -> Report:
        done = len(self.profiled) - 1  # profiled iterations after the cold call
        timed = len(self.observed.times) - self.observed.traced  # plain ones
        notes = []
        if partial:
            if done < self.p:
                where = f"after {done} of {self.p} profiled iterations"
            else:
                where = f"after {max(timed, 0)} of {self.n} timed iterations"
            if done < self.p:
                notes.append(
                    "the interrupted iteration's calls are in the profile: call-count classes "
                    "and steady-state shares are approximate"
                )
            notes.append(where)
        iterations = max(done, 1)
        if iterations < MIN_PROFILED:
            notes.insert(
                0,
                f"only {iterations} iteration(s): per-iteration and build cost cannot be told "
                "apart below 3; use iterations=20",
            )
        notes.extend(self.observed.notes)
        notes.extend(self.session.notes())
        obs = self.observed
        probes = None
        if obs.tf_profile is not None or obs.jax_profile is not None:
            probes = Probes(
                tf_profile=obs.tf_profile,
                jax_profile=obs.jax_profile,
                trace_files=obs.trace_files,
            )
        return build_report(
            call=self.call,
            # the traced block ran under the profiler whether or not its trace could be read:
            # its calls stay apart from the plain ones, the median and the timeline's
            timing=steady_timing(self.profiled, obs.times, obs.traced),
            profile=self.session.snapshot(),
            cold=self.cold,
            rules=rules,
            finding_rules=finding_rules,
            notes=notes,
            source="profile",
            partial=partial,
            probes=probes,
            **obs.timed,
            **self.session.records(),
        )
