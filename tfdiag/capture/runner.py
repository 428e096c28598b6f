"""``tfdiag.profile``: run a call under cProfile, then time it with no profiler attached.

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
    jax_in_use,
    probe_flag,
    profiled_iterations,
    tf_in_use,
)
from tfdiag.capture.session import CaptureSession
from tfdiag.measure.budget import DEFAULT_BUDGET_S, check_budget
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


def profile(
    fn: Callable[..., Any],
    *args: Any,
    iterations: int = 20,
    rules: Iterable[Rule] = (),
    findings: Iterable[FindingRule] = (),
    sampling: bool | None = None,
    tf_profiler: bool | None = None,
    verify: bool = False,
    verify_s: float = DEFAULT_BUDGET_S,
    progress: bool = True,
    **kwargs: Any,
) -> Report:
    """Profile ``fn(*args, **kwargs)`` and explain where its time goes.

    Two passes (docs/how-it-works.md): the cold first call and half of ``iterations``
    run under cProfile, so one-time build cost is visible beside per-iteration cost (the
    table is snapshotted after the cold call, so the steady state is known exactly);
    then ``iterations`` calls are timed without cProfile, watched by the light probes: the
    first block of them is traced with the TensorFlow profiler (the caller waiting for
    input, tf.data's threads, the model's own op time), and every call TensorFlow makes
    back into Python (``py_function``, ``numpy_function``, a generator) is timed. The
    whole diagnosis costs about twice the plain iterations (docs/probes.md).

    Args:
        fn: ``model.predict``, ``model.fit``, ``model.train_on_batch``, a model, or
            any callable.
        *args: passed to ``fn`` unchanged.
        iterations: calls after the cold one, in each pass.
        rules: extra culprit rules, tried before the built-in catalog.
        findings: your own findings (:class:`tfdiag.FindingRule`), run after the built-in ones.
        sampling: sample the call's stack in the timed pass (a second, full-stack
            breakdown; exports as a pyinstrument session or speedscope). Off by default.
        tf_profiler: trace the first block of the timed pass with the TensorFlow profiler
            and read it with xprof (op time vs wall time, input waits, top ops, XProf's
            verdict). ``None`` (default): on when the call uses TensorFlow.
        progress: a transient progress bar on stderr, on a terminal or in a notebook only,
            updated between calls (never inside a timed one); ``False`` or
            ``TFDIAG_PROGRESS=0``: none.
        verify: then build each finding's mechanical fix on this call, time it against the
            call as written (compare's engine) and check it; the result is each finding's
            ``verification`` (docs/verify.md). Training fixes run on clones of the model.
        verify_s: the seconds verification may take (default 60); findings it cannot reach
            in time say so.
        **kwargs: passed to ``fn`` unchanged (``epochs=1, verbose=0``...).

    Raises:
        InputError: ``fn`` is not callable or ``iterations`` is not a positive integer.
        ProfilerBusyError: another ``profile()`` is running in this process.
        Interrupted: Ctrl-C (a KeyboardInterrupt) during the run; its ``report`` holds the
            iterations done so far, marked partial.
        Exception: whatever ``fn`` raises, unchanged, with the profiler detached.
    """
    budget = check_budget(verify_s)
    if not isinstance(verify, bool):
        raise InputError(f"verify must be True or False, got {verify!r}")
    ctrl_c = CtrlC.install()
    try:
        report = _profile(
            ctrl_c, fn, args, kwargs, iterations=iterations, rules=rules, findings=findings,
            sampling=sampling, tf_profiler=tf_profiler, verify=verify, budget=budget,
            progress=progress,
        )  # fmt: skip
    except BaseException:
        ctrl_c.restore()  # a press as it goes back joins the exception on its way out
        raise
    # Made before the user's handler comes back: after it, tfdiag runs no Python call (where
    # a press would raise a bare KeyboardInterrupt in tfdiag's frame and lose the report).
    late = Interrupted("interrupted as the run finished: the report is complete", report)
    if ctrl_c.restore() or ctrl_c.noted:
        raise late
    return report


def _profile(
    ctrl_c: CtrlC,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    iterations: int,
    rules: Iterable[Rule],
    findings: Iterable[FindingRule],
    sampling: bool | None,
    tf_profiler: bool | None,
    verify: bool,
    budget: float,
    progress: bool,
) -> Report:
    """:func:`profile` with tfdiag's Ctrl-C handler in place (restored by the caller)."""
    from tfdiag.render.progress import progress_bar

    with progress_bar("tfdiag.profile", enabled=progress) as on_step:
        report = profile_call(
            fn,
            args,
            kwargs,
            iterations=iterations,
            rules=rules,
            findings=findings,
            sampling=sampling,
            tf_profiler=tf_profiler,
            on_step=on_step,
            ctrl_c=ctrl_c,
        )
    if ctrl_c.noted or not verify:  # noted: pressed after the passes, as the bar closed
        return report
    from tfdiag.measure.verify import VerifySettings, verify_report  # only when asked

    try:
        settings = VerifySettings(budget_s=budget)
        ctrl_c.arm()
        verified = verify_report(report, fn, args, kwargs, settings=settings, progress=progress)
        ctrl_c.disarm()  # verified: a press from here on is "as the run finished"
    except KeyboardInterrupt:
        ctrl_c.disarm()
        raise Interrupted(
            "interrupted while verifying: .report is complete, unverified", report
        ) from None
    return verified


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
    """:func:`profile` with the arguments as a tuple and a dict, and the clock injectable.

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
            tf_profiler=want_tf if want_tf is not None else tf_in_use() or jax_in_use(),
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
        traced = obs.tf_profile is not None or obs.jax_profile is not None
        if obs.sampling is not None or traced:
            probes = Probes(
                sampling=obs.sampling,
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
            py_callbacks=obs.py_callbacks,
            machine=obs.machine,
            **self.session.records(),
        )
