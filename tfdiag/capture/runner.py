"""``tfdiag.profile``: run a call under cProfile, then time it with no profiler attached.

Every pass reads one injectable clock (``time.perf_counter`` by default); cProfile
reads it too when it is not the default, so a test on a fake clock gets exact
per-function and per-iteration times.
"""

from __future__ import annotations

import cProfile
import inspect
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from tfdiag.advise import check_finding_rules
from tfdiag.capture.assemble import build_report, steady_timing
from tfdiag.capture.environment import describe_call
from tfdiag.records.catalog import Rule
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.clock import Clock
from tfdiag.records.errors import InputError, ProbeError, ProfilerBusyError
from tfdiag.records.probes import Probes
from tfdiag.records.stats import CallerEdge, FunctionKey, FunctionStat, ProfileStats
from tfdiag.results.report import Report

#: More iterations than this is a typo, not a profile.
MAX_ITERATIONS = 1_000_000
_LOCK = threading.Lock()


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during ``profile()``: the profilers are detached and, when at least the cold
    call finished, ``report`` holds what was measured so far (``report.partial`` is true).

    A subclass of KeyboardInterrupt, so a script that does not catch it still stops.
    """

    def __init__(self, message: str, report: Report | None = None) -> None:
        super().__init__(message)
        self.report = report


def new_profiler(clock: Clock = time.perf_counter) -> cProfile.Profile:
    """cProfile on ``clock``: its own C timer for the default, the given clock otherwise."""
    return cProfile.Profile() if clock is time.perf_counter else cProfile.Profile(clock)


def busy_reason() -> str | None:
    """Why profiling cannot start now, or None: then the caller holds ``_LOCK``.

    One tfdiag profiler at a time per process, and never over a profiler someone else
    attached (``python -m cProfile``, an IDE): enabling cProfile would silently replace it.
    """
    if not _LOCK.acquire(blocking=False):
        return "tfdiag.profile() is already running in this process"
    if sys.getprofile() is not None:
        _LOCK.release()
        return (
            "another profiler is attached (sys.getprofile() is set, e.g. by python -m cProfile "
            "or an IDE); tfdiag would replace it, so it does not start"
        )
    return None


_OWN_FRAMES = frozenset({"<method 'disable' of '_lsprof.Profiler' objects>"})


def _label(code: Any) -> FunctionKey:
    if isinstance(code, str):
        return ("~", 0, code)
    return (code.co_filename, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))


def snapshot(profiler: cProfile.Profile) -> ProfileStats:
    """The profiler's table keyed by (file, line, *qualified* name), without tfdiag's frames.

    Like ``cProfile.Profile.snapshot_stats`` but with ``co_qualname``, so two
    methods both called ``predict`` stay apart; code objects that share a key
    (two lambdas on one line) are summed.
    """
    totals: dict[FunctionKey, list[float]] = {}
    edges: dict[FunctionKey, dict[FunctionKey, list[float]]] = {}
    for entry in profiler.getstats():
        key = _label(entry.code)
        if key[2] in _OWN_FRAMES:
            continue
        t = totals.setdefault(key, [0, 0, 0.0, 0.0])
        t[0] += entry.callcount
        t[1] += entry.callcount - entry.reccallcount
        t[2] += entry.inlinetime
        t[3] += entry.totaltime
        for sub in entry.calls or ():
            callee = _label(sub.code)
            if callee[2] in _OWN_FRAMES:
                continue
            e = edges.setdefault(callee, {}).setdefault(key, [0, 0, 0.0, 0.0])
            e[0] += sub.callcount
            e[1] += sub.callcount - sub.reccallcount
            e[2] += sub.inlinetime
            e[3] += sub.totaltime
    keys = list(totals)
    index = {k: i for i, k in enumerate(keys)}
    functions = []
    for key in keys:
        calls, pcalls, self_s, cum_s = totals[key]
        callers = tuple(
            CallerEdge(index[c], int(v[0]), int(v[1]), v[2], v[3])
            for c, v in edges.get(key, {}).items()
            if c in index
        )
        functions.append(
            FunctionStat(key[0], key[1], key[2], int(calls), int(pcalls), self_s, cum_s, callers)
        )
    return ProfileStats(tuple(functions))


def _check_iterations(iterations: object) -> int:
    if isinstance(iterations, bool) or not isinstance(iterations, int):
        raise InputError(f"iterations must be an integer, got {iterations!r}")
    if iterations < 1:
        raise InputError(f"iterations must be at least 1, got {iterations}")
    if iterations > MAX_ITERATIONS:
        raise InputError(f"iterations must be at most {MAX_ITERATIONS:,}, got {iterations:,}")
    return iterations


def _probe_passes(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    n: int,
    *,
    sampling: bool,
    tf_profiler: bool,
    clock: Clock,
) -> tuple[Probes | None, list[str]]:
    """One pass per requested probe; a probe that cannot run leaves a note instead."""
    if not (sampling or tf_profiler):
        return None, []
    notes = []
    probes = Probes()
    if sampling:
        from tfdiag.capture.sampling import sampled_pass

        try:
            probes = replace(probes, sampling=sampled_pass(fn, args, kwargs, n, clock=clock))
        except ProbeError as exc:
            notes.append(f"sampling probe: {exc}")
    if tf_profiler:
        from tfdiag.capture.tfprofiler import traced_pass

        try:
            record, files = traced_pass(fn, args, kwargs, n, clock=clock)
            probes = replace(probes, tf_profile=record, trace_files=files)
        except ProbeError as exc:
            notes.append(f"TF profiler probe: {exc}")
    return probes, notes


def profile(
    fn: Callable[..., Any],
    *args: Any,
    iterations: int = 20,
    rules: Iterable[Rule] = (),
    findings: Iterable[FindingRule] = (),
    sampling: bool = False,
    tf_profiler: bool = False,
    **kwargs: Any,
) -> Report:
    """Profile ``fn(*args, **kwargs)`` and explain where its time goes.

    The cold first call and ``iterations`` more run under cProfile, so one-time
    build cost is visible beside per-iteration cost (the table is also snapshotted
    after the cold call, so the steady state is known exactly); then
    ``iterations`` calls run with no profiler attached, for honest per-iteration times.
    Each optional probe then runs its own pass of ``iterations`` calls, so its
    cost is measured against the unprofiled pass (docs/probes.md).

    Args:
        fn: ``model.predict``, ``model.fit``, ``model.train_on_batch``, a model, or
            any callable.
        *args: passed to ``fn`` unchanged.
        iterations: calls after the cold one, in each pass.
        rules: extra culprit rules, tried before the built-in catalog.
        findings: your own findings (:class:`tfdiag.FindingRule`), run after the built-in ones.
        sampling: also sample the call's stacks (a second, full-stack breakdown; saved as
            a pyinstrument session, HTML and speedscope JSON).
        tf_profiler: also trace the calls with the TensorFlow profiler and read op-level
            figures with xprof (op time vs wall time, top ops, XProf's verdict).
        **kwargs: passed to ``fn`` unchanged (``epochs=1, verbose=0``...).

    Raises:
        InputError: ``fn`` is not callable or ``iterations`` is not a positive integer.
        ProfilerBusyError: another ``profile()`` is running in this process.
        Interrupted: Ctrl-C (a KeyboardInterrupt) during the run; its ``report`` holds the
            iterations done so far, marked partial.
        Exception: whatever ``fn`` raises, unchanged, with the profiler detached.
    """
    return profile_call(
        fn,
        args,
        kwargs,
        iterations=iterations,
        rules=rules,
        findings=findings,
        sampling=sampling,
        tf_profiler=tf_profiler,
    )


def profile_call(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    iterations: int = 20,
    rules: Iterable[Rule] = (),
    findings: Iterable[FindingRule] = (),
    sampling: bool = False,
    tf_profiler: bool = False,
    clock: Clock = time.perf_counter,
) -> Report:
    """:func:`profile` with the arguments as a tuple and a dict, and the clock injectable.

    Every time in the report — cProfile's, the timed pass's, the probes' — is read
    from ``clock``; a fake clock makes them exact in tests.
    """
    kwargs = dict(kwargs or {})
    if not callable(fn):
        raise InputError(f"expected a callable such as model.predict, got {type(fn).__name__}")
    if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn):
        raise InputError(
            f"{getattr(fn, '__name__', 'fn')} is a generator or async function: calling it does "
            "not run its body; profile a function that does the work"
        )
    n = _check_iterations(iterations)
    rules = tuple(rules)
    if not all(isinstance(r, Rule) for r in rules):
        raise InputError("rules must be tfdiag.Rule objects")
    finding_rules = check_finding_rules(findings)
    if not isinstance(sampling, bool) or not isinstance(tf_profiler, bool):
        raise InputError("sampling and tf_profiler must be True or False")
    run = _Run(fn, args, kwargs, n, clock)  # describes the call: user code (a __repr__) may raise
    reason = busy_reason()
    if reason is not None:
        raise ProfilerBusyError(reason)
    try:
        run.profiled_pass()
        run.timed_pass()
        run.probes, run.notes = _probe_passes(
            fn, args, kwargs, n, sampling=sampling, tf_profiler=tf_profiler, clock=clock
        )
    except KeyboardInterrupt:
        if run.cold is None:
            raise Interrupted("interrupted during the first call: nothing to report") from None
        report = run.report(rules, finding_rules, partial=True)
        raise Interrupted(
            f"interrupted: {report.notes[-1]}; the partial report is this exception's .report",
            report,
        ) from None
    finally:
        _LOCK.release()
    return run.report(rules, finding_rules, partial=False)


class _Run:
    """The passes of one ``profile()`` call and what each has measured so far."""

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        n: int,
        clock: Clock,
    ) -> None:
        self.fn, self.args, self.kwargs, self.n, self.clock = fn, args, kwargs, n, clock
        self.call = describe_call(fn, args, kwargs)
        self.profiler = new_profiler(clock)
        self.profiled: list[float] = []
        self.unprofiled: list[float] = []
        self.cold: ProfileStats | None = None
        self.probes: Probes | None = None
        self.notes: list[str] = []

    def profiled_pass(self) -> None:
        """The cold call and N iterations under cProfile, snapshotted after the cold call."""
        clock, profiler = self.clock, self.profiler
        try:  # Python 3.12+ says so here when another profiling tool holds sys.monitoring
            profiler.enable()
        except ValueError as exc:
            raise ProfilerBusyError(f"another profiler is attached ({exc})") from None
        profiler.disable()
        try:
            for i in range(self.n + 1):
                t0 = clock()
                profiler.enable()
                self.fn(*self.args, **self.kwargs)
                profiler.disable()
                self.profiled.append(clock() - t0)
                if i == 0:
                    self.cold = snapshot(profiler)
        finally:
            profiler.disable()

    def timed_pass(self) -> None:
        """N iterations with no profiler attached: the honest per-iteration times."""
        clock = self.clock
        for _ in range(self.n):
            t0 = clock()
            self.fn(*self.args, **self.kwargs)
            self.unprofiled.append(clock() - t0)

    def report(
        self, rules: tuple[Rule, ...], finding_rules: tuple[FindingRule, ...], *, partial: bool
    ) -> Report:
        done = len(self.profiled) - 1  # profiled iterations after the cold call
        notes = []
        if partial:
            if done < self.n:
                where = f"after {done} of {self.n} profiled iterations"
            elif len(self.unprofiled) < self.n:
                where = f"after {len(self.unprofiled)} of {self.n} unprofiled iterations"
            else:
                where = "during the probe passes (their records are left out)"
            if done < self.n:
                notes.append(
                    "the interrupted iteration's calls are in the profile: call-count classes "
                    "and steady-state shares are approximate"
                )
            notes.append(where)
        iterations = max(done, 1)
        if iterations < 3:
            notes.insert(
                0,
                f"only {iterations} iteration(s): per-iteration and build cost cannot be told "
                "apart below 3; use iterations=20",
            )
        notes.extend(self.notes)
        return build_report(
            call=self.call,
            timing=steady_timing(self.profiled, self.unprofiled),
            profile=snapshot(self.profiler),
            cold=self.cold,
            rules=rules,
            finding_rules=finding_rules,
            notes=notes,
            source="profile",
            partial=partial,
            probes=self.probes,
        )
