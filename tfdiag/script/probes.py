"""The light probes of ``tfdiag run``: one hook of each kind for the whole script, each
routed to the call site whose call is running.

A site's profiled calls are its capture session's (:mod:`tfdiag.capture.session`: the
graphs they trace, JAX's compilations); its unprofiled calls are its timed pass's
(:mod:`tfdiag.capture.timed`: the Python calls TensorFlow makes back, the machine's load
per call); and once its cProfile calls are done, the next few run under the running
backend's tracer (:mod:`tfdiag.capture.trace_block`), one site at a time, for up to
:data:`MAX_TRACED_SITES` sites — what separates waiting for input from compute.
"""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack
from typing import Any

from tfdiag.capture.jit import CompileRecorder
from tfdiag.capture.pycalls import Sink, install
from tfdiag.capture.tfprofiler import TraceFiles
from tfdiag.capture.timed import TimedContext, TimedProbes
from tfdiag.capture.trace_block import TraceBlock, TraceRecord, traced_steps
from tfdiag.records.clock import Clock
from tfdiag.records.script import MAX_COSTLY_SITES

#: Sites traced at most (each trace costs an export and a read).
MAX_TRACED_SITES = MAX_COSTLY_SITES


class SiteProbes:
    """One call site's records; ``calls`` is kept up to date by the recorder."""

    def __init__(self, clock: Clock) -> None:
        self.calls = 0
        #: The site's Python-callback sink, fed by the script's one hook while its call runs.
        self.callbacks: Sink | None = None
        #: The site's timed probes (started when the site is first seen, stopped at the end).
        self.timed = TimedProbes(TimedContext(clock=clock, hook=self._routed))
        self.block: TraceBlock | None = None

    def _routed(self, sink: Sink) -> None:
        """The timed pass's hook for this site: the script's router feeds ``sink``."""
        self.callbacks = sink


class _CallbackRouter:
    """The callback hook's sink: the running site's recorder, or nowhere."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.main = threading.get_ident()
        self.site: SiteProbes | None = None
        self._nowhere: dict[str, list[Any]] = {}

    @property
    def active(self) -> bool:
        return self.site is not None

    @property
    def seen(self) -> dict[str, list[Any]]:
        site = self.site  # read once: another thread may clear it meanwhile
        sink = site.callbacks if site is not None else None
        return sink.seen if sink is not None else self._nowhere


class ScriptProbes:
    """Installed for the whole script (``start``/``stop``, always paired)."""

    def __init__(self, *, iterations: int, tf_profiler: bool, clock: Clock = time.perf_counter):
        self.clock = clock
        #: Whether sites' calls are traced (the running backend's tracer).
        self.tf_profiler = tf_profiler
        self.steps = traced_steps(iterations)
        self._callbacks = _CallbackRouter(clock)
        #: JAX's compilations over the whole script (where the script has loaded JAX).
        self.compiles = CompileRecorder()
        self._stack = ExitStack()
        self._block_owner: SiteProbes | None = None
        self._blocks = 0
        #: Recorded calls running now, in every thread (:meth:`entering` to :meth:`ended`).
        self._flight = 0
        self._flight_lock = threading.Lock()
        self._sites: list[SiteProbes] = []

    def new_site(self) -> SiteProbes:
        site = SiteProbes(self.clock)
        self._sites.append(site)
        site.timed.start()
        return site

    def start(self) -> None:
        restore = install(self._callbacks)
        if restore is not None:
            self._stack.callback(restore)
        self._stack.enter_context(self.compiles.attach())

    def stop(self) -> None:
        """Remove the hooks; a tracer session still open writes what it traced."""
        self._stack.close()
        for site in self._sites:
            site.timed.stop()
        owner, self._block_owner = self._block_owner, None
        if owner is not None and owner.block is not None:
            owner.block.close()

    def release_tf_profiler(self) -> None:
        """Write the trace a site's block holds open (between its calls), so that a fit's
        own callback can start the tracer."""
        owner = self._block_owner
        if owner is not None and owner.block is not None:
            owner.block.close()
            if owner.block.done:
                self._block_owner = None

    # -- around one call -------------------------------------------------------------

    def entering(self, site: SiteProbes) -> None:
        """A call of ``site`` starts (profiled or not). A trace holds only its own site's
        calls: when another site's block is open between two of its calls, the trace of
        those calls is written now, so this call's ops (the pipelines a ``predict`` builds,
        its threads) are never read as the other site's. A call made inside the traced
        call (a callback's ``predict`` in a ``fit``) is part of it: the block stays open.

        A call of another thread while a call is traced puts its ops in the process-wide
        trace, which then cannot be split by call: that trace is dropped (with a note)."""
        with self._flight_lock:
            self._flight += 1
            owner = self._block_owner
            if owner is not None and owner.block is not None and owner.block.in_call:
                owner.block.spoil(
                    f"{owner.block.name} probe: a call from another thread ran while a call "
                    "was traced; the trace holds both and cannot be split by call: not read"
                )
        owner = self._block_owner
        if owner is not None and owner is not site and owner.block is not None:
            owner.block.close()
            if owner.block.done:
                self._block_owner = None

    def plain(self, site: SiteProbes) -> bool:
        """An unprofiled call of ``site`` starts: whether it runs under the tracer (else its
        Python callbacks are recorded). :meth:`entering` ran first. No trace begins while
        another thread's call runs (its ops would be in it)."""
        with self._flight_lock:
            alone = self._flight == 1
        if self.tf_profiler and alone and site.block is None and self._block_owner is None:
            if self._blocks < MAX_TRACED_SITES and self.steps > 0:
                site.block = TraceBlock(limit=self.steps, clock=self.clock)
                self._block_owner, self._blocks = site, self._blocks + 1
        if alone and site.block is not None and not site.block.done and site.block.begin():
            return True
        self._callbacks.site = site
        return False

    def ended(self, site: SiteProbes, seconds: float, traced: bool) -> None:
        """A call ended (:meth:`plain`'s, or a profiled one, or one that failed before it
        ran): once for each :meth:`entering`."""
        with self._flight_lock:
            self._flight -= 1
        self._callbacks.site = None
        if traced and site.block is not None:
            site.block.end(seconds)
        if site.block is not None and site.block.done and self._block_owner is site:
            self._block_owner = None

    @staticmethod
    def tf_record(site: SiteProbes, *, wanted: bool) -> tuple[TraceRecord | None, TraceFiles]:
        """The site's trace record (read only when ``wanted``: a site with a report)."""
        if site.block is None:
            return None, ()
        return site.block.finish(read=wanted)
