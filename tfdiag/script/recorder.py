"""The recorder behind ``tfdiag run``: every instrumented Keras call, by the user's line.

Each call is charged to the nearest line of the user's own code on the stack (the
script, or a file beside it that is not an installed package: :mod:`tfdiag.script.sites`,
where each site's calls are kept); calls Keras makes
inside another instrumented call (``fit`` → ``evaluate`` for validation) belong to
the outer call. The first call of each site and ``iterations`` more run under
cProfile, so a costly site gets the same analysis as ``tfdiag.profile``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tfdiag.capture.assemble import build_report, steady_timing
from tfdiag.capture.environment import current_environment
from tfdiag.capture.lock import PROFILER_LOCK
from tfdiag.capture.session import CaptureSession
from tfdiag.capture.trace_block import as_probes
from tfdiag.records.clock import Clock, now_iso
from tfdiag.records.lines import LinesRecord
from tfdiag.records.report import Timing
from tfdiag.records.script import COSTLY_SHARE, MAX_COSTLY_SITES, CallSite
from tfdiag.records.stats import ProfileStats
from tfdiag.results.report import Report
from tfdiag.results.script import ScriptResult
from tfdiag.script.fit_probe import SiteCallback, injectable
from tfdiag.script.probes import ScriptProbes
from tfdiag.script.sites import Site, Sites

#: Per-call times kept per site (the counts and totals stay exact beyond it).
MAX_CALL_TIMES = 10_000
#: The CallbackList hook Keras 3 and tf_keras call once per batch, by method.
_BATCH_HOOKS = {
    "fit": "CallbackList.on_train_batch_begin",
    "evaluate": "CallbackList.on_test_batch_begin",
    "predict": "CallbackList.on_predict_batch_begin",
}


def _batches(stats: ProfileStats, method: str) -> int:
    """How many batches one fit/evaluate/predict call ran: its batch-begin hook's calls."""
    hook = _BATCH_HOOKS.get(method)
    return max((f.primitive_calls for f in stats.functions if f.name == hook), default=0)


class Recorder:
    """Collects every instrumented call by the user's line that made it."""

    def __init__(
        self,
        script: Path,
        *,
        iterations: int,
        tf_profiler: bool = False,
        clock: Clock = time.perf_counter,
    ) -> None:
        self.clock = clock
        self.probes = ScriptProbes(iterations=iterations, tf_profiler=tf_profiler, clock=clock)
        self.sites = Sites(script, self.probes.new_site)
        self.script = self.sites.script
        self.limit = iterations + 1 if iterations > 0 else 0
        self.iterations = iterations
        #: Time spent in this recorder's own bookkeeping, outside the calls it times.
        self.overhead_s = 0.0
        self._local = threading.local()
        self._lock = threading.Lock()
        #: The frameworks imported before the script started (their import time is not in
        #: the script's wall time).
        self.preloaded: tuple[str, ...] = ()

    def wrap(self, original: Callable[..., Any], method: str) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(original)
        def instrumented_call(model: Any, *args: Any, **kwargs: Any) -> Any:
            return recorder.call(original, method, model, args, kwargs)

        return instrumented_call

    @property
    def inside(self) -> bool:
        """Whether this thread is inside a recorded call (whose inner calls are its own)."""
        return bool(getattr(self._local, "inside", False))

    def call(
        self,
        original: Callable[..., Any],
        method: str,
        model: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        described: Any = None,
        owner: str | None = None,
    ) -> Any:
        """``original(model, *args, **kwargs)``, recorded as a call of ``method`` at the
        user's line that made it; ``described`` is the callable the report describes
        (default: ``model``'s ``method``), ``owner`` the site's owner (default: the
        model's class)."""
        local = self._local
        if getattr(local, "inside", False):
            return original(model, *args, **kwargs)
        clock = self.clock
        entered = clock()
        local.inside = True
        try:
            site = self.sites.at(sys._getframe(2), method, model, args, kwargs, described, owner)
            with self._lock:
                site.note_model(model)
                site.note_inputs(args, kwargs)
            probes = site.probes
            assert probes is not None
            self.probes.entering(probes)  # another site's open trace ends before this call
            session = self._session_for(site)  # with the profiler lock held
            probes.calls = site.calls
            traced = False
            if session is not None:
                try:
                    fit_cb = self._fit_callback(site, session, original, args, kwargs)
                    session.set_call(len(site.profiled_s))
                    session.attach()
                except BaseException:
                    session.detach()
                    PROFILER_LOCK.release()
                    self.probes.ended(probes, 0.0, False)  # paired with entering
                    raise
                if fit_cb is not None:
                    kwargs = {**kwargs, "callbacks": [*(kwargs.get("callbacks") or ()), fit_cb]}
            else:
                fit_cb = None
                traced = self.probes.plain(probes)
                if not traced and len(site.profiled_s) + len(site.timed_s) < MAX_CALL_TIMES:
                    probes.timed.before_call(len(site.timed_s))  # a timeline call: its window
            failed = False
            t0 = clock()
            if session is not None:
                session.profiler.enable()
            try:
                return original(model, *args, **kwargs)
            except BaseException:
                failed = True
                raise
            finally:
                if session is not None:
                    session.profiler.disable()
                t1 = clock()
                if session is not None:
                    session.detach()
                self.probes.ended(probes, t1 - t0, traced)
                self._record(site, t1 - t0, failed, session, traced, fit_cb)
                with self._lock:  # the stack walk, the snapshots: left out of the wall time
                    self.overhead_s += (t0 - entered) + (clock() - t1)
        finally:
            local.inside = False

    # -- internals -------------------------------------------------------------------

    def _fit_callback(
        self,
        site: Site,
        session: CaptureSession,
        original: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> SiteCallback | None:
        """The callback that diagnoses a site's first ``fit`` from inside, or None."""
        if site.method != "fit" or site.calls or site.profiled_s:
            return None
        if not injectable(original, args, kwargs):
            return None
        self.probes.release_tf_profiler()  # its TF trace must not be open during the fit
        return SiteCallback(
            iterations=self.iterations,
            outer=session,
            call=site.call,
            where=f"{site.file}:{site.line}",
            tf_profiler=self.probes.tf_profiler,
            clock=self.clock,
        )

    def _session_for(self, site: Site) -> CaptureSession | None:
        """The site's session when this call is profiled (the lock is then held), else None."""
        if len(site.profiled_s) >= self.limit or PROFILER_LOCK.try_acquire() is not None:
            return None
        if site.session is None:
            site.session = CaptureSession(self.clock)
        return site.session

    def _record(
        self,
        site: Site,
        elapsed: float,
        failed: bool,
        session: CaptureSession | None,
        traced: bool,
        fit_cb: SiteCallback | None = None,
    ) -> None:
        with self._lock:
            site.calls += 1
            site.total_s += elapsed
            site.errors += failed
            if fit_cb is not None and fit_cb.took_over:  # its profile is the callback's
                fit_cb.close()  # a fit that raised may have left it attached
                # its records are the callback's: the site's later calls start a new session
                site.callback, site.first_s, site.session = fit_cb, elapsed, None
            elif traced:  # under the tracer: not the timeline's
                site.traced += 1
            elif session is not None:
                site.profiled_s.append(elapsed)
                if len(site.profiled_s) == 1:
                    site.cold = session.snapshot()
                if len(site.profiled_s) == self.limit:
                    site.stats = session.snapshot()
            elif len(site.profiled_s) + len(site.timed_s) < MAX_CALL_TIMES:
                site.timed_s.append(elapsed)
                if site.probes is not None:  # one window per timed call, as the timeline reads
                    site.probes.timed.after_call(len(site.timed_s) - 1)
        if session is not None:
            PROFILER_LOCK.release()

    def _report(self, site: Site, shown: str) -> Report | None:
        session = site.session
        if site.stats is None and session is not None:  # fewer calls than it would profile
            site.stats = session.snapshot()
        k = len(site.profiled_s)
        if site.callback is not None and k < 2:  # its first fit, diagnosed from inside
            return site.callback.report
        if site.stats is None or session is None or k == 0:
            return None
        first = 1 if site.callback is None else 2
        notes = [
            f"calls made at {shown}; the first {k} ran under cProfile"
            if first == 1
            else f"calls made at {shown}; call 1 was diagnosed by tfdiag's ProfileCallback "
            f"(no report is shown for it), calls 2–{k + 1} ran under cProfile"
        ]
        assert site.probes is not None
        trace, files = self.probes.tf_record(site.probes, wanted=True)
        if site.traced:
            n = k + first
            span = f"call {n}" if site.traced == 1 else f"calls {n}–{n + site.traced - 1}"
            tracer = site.probes.block.name if site.probes.block is not None else "tracer"
            notes.append(
                f"{span} ran under the {tracer}"
                + ("" if trace is not None else ", which recorded nothing")
                + ", and are left out of the timeline"
            )
            notes += site.probes.block.notes if site.probes.block is not None else []
        notes += session.notes()
        if site.timed_s:
            start = k + site.traced + first
            notes.append(
                f"the timeline is calls {start}–{start + len(site.timed_s) - 1} of this site, "
                f"with no profiler attached (numbered 1–{len(site.timed_s)} there)"
            )
        if k >= 2:
            timing = steady_timing(site.profiled_s, site.timed_s)
            cold = site.cold
        else:
            batches = _batches(site.stats, site.method)
            if batches >= 3:
                notes.append(
                    f"one {site.method} call: its {batches} batches are read as the iterations "
                    "(no cold-call snapshot, so steady state = runtime − build)"
                )
                timing, cold = Timing(iterations=batches, profiled_calls=batches), None
            else:
                notes.append("one call of one or two batches: all of it is first-call cost")
                timing = Timing(iterations=1, profiled_calls=1, first_call_s=site.profiled_s[0])
                cold = site.stats
        return build_report(
            call=dataclasses.replace(site.call, facts=site.call.facts + site.call_facts),
            timing=timing,
            profile=site.stats,
            cold=cold,
            notes=notes,
            source="script",
            partial=site.errors > 0,
            probes=as_probes(trace, files),
            **site.probes.timed.records(),
            **session.records(k),
        )

    def result(
        self,
        argv: Sequence[str],
        measured_s: float,
        status: str,
        lines: LinesRecord | None = None,
    ) -> ScriptResult:
        """The result; the script's wall time is ``measured_s`` less this recorder's overhead;
        ``lines``: the whole script's sampled lines."""
        wall_s = max(measured_s - self.overhead_s, 0.0)
        self.probes.stop()
        ranked = sorted(self.sites, key=lambda s: s.total_s, reverse=True)
        sites: list[CallSite] = []
        for site in ranked:
            costly = (
                wall_s > 0
                and site.total_s / wall_s >= COSTLY_SHARE
                and sum(s.report is not None for s in sites) < MAX_COSTLY_SITES
            )
            location = f"{site.file}:{site.line}"
            sites.append(
                CallSite(
                    file=site.file,
                    line=site.line,
                    method=site.method,
                    owner=site.owner,
                    flavour=site.flavour,
                    code=site.code,
                    calls=site.calls,
                    total_s=site.total_s,
                    errors=site.errors,
                    profiled_calls=len(site.profiled_s) + (site.first_s is not None),
                    call_s=tuple(
                        ([] if site.first_s is None else [site.first_s])
                        + site.profiled_s
                        + site.timed_s
                    ),
                    report=self._report(site, location) if costly else None,
                )
            )
            if site.probes is not None:  # whatever no report read: its trace folder goes
                self.probes.tf_record(site.probes, wanted=False)
        notes = []
        if self.preloaded:
            *rest, last = self.preloaded
            names = f"{', '.join(rest)} and {last}" if rest else last
            verb, its = ("were", "their") if rest else ("was", "its")
            notes.append(
                f"{names} {verb} imported before the script started: {its} import time is "
                "not in the script's wall time"
            )
        if self.limit:
            notes.append(
                f"the first call of each site and {self.iterations} more ran under cProfile, "
                "which slows them; times include that"
            )
        cwd = os.getcwd()
        return ScriptResult(
            script=os.path.relpath(self.script) if self.script.startswith(cwd) else self.script,
            argv=tuple(argv),
            wall_s=wall_s,
            overhead_s=self.overhead_s,
            status=status,
            sites=tuple(sites),
            iterations=self.iterations,
            environment=current_environment(),
            notes=tuple(notes),
            created=now_iso(),
            lines=lines,
            jit_compiles=self.probes.compiles.record(),
        )
