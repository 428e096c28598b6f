"""A script's ``fit`` call, diagnosed from inside by :class:`ProfileCallback`.

``tfdiag run`` profiles whole calls, and most scripts call ``fit`` once: one call has no
unprofiled calls after it, so the TF profiler and the Python-callback hook would never
see it. The first call of each ``fit`` site therefore gets this callback added to its
``callbacks``: it takes over from the recorder's cProfile when ``fit`` starts training
and diagnoses the batches as ``ProfileCallback`` does (a cold batch, steady batches under
cProfile, a few under the TF profiler, the rest timed), so a script's ``fit`` gets the
report the user would get by adding the callback by hand.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import replace
from typing import Any

from tfdiag.capture.callback import ProfileCallback
from tfdiag.capture.session import CaptureSession
from tfdiag.records.clock import Clock
from tfdiag.records.report import CallInfo

#: Batches the TF profiler traces after the cProfile range (ProfileCallback's block).
_TRACED = 5


def batch_range(total: int | None, iterations: int) -> tuple[int, int]:
    """``(first, last)`` for a fit of ``total`` batches (None: unknown). Batch 1 traces the
    step, so it is left to the timeline when the fit is long enough (as the callback's
    default range leaves the first batches); up to ``iterations`` steady batches follow
    the cold one, leaving about half of a short fit to the TF profiler and the timeline."""
    first = 2 if total is None or total >= 8 else 1
    steady = max(iterations, 2)
    if total is not None:
        steady = min(steady, max(2, (total - first) // 2))
    return first, first + steady


def fit_batches(params: dict[str, Any]) -> int | None:
    """The batches a fit will run, from the params Keras gives its callbacks."""
    steps, epochs = params.get("steps"), params.get("epochs", 1)
    if isinstance(steps, int) and isinstance(epochs, int) and steps > 0 and epochs > 0:
        return steps * epochs
    return None


def injectable(original: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a ``callbacks`` list can be added: ``original`` takes ``callbacks`` (Keras'
    ``fit`` does), not passed positionally, and it is None, a list or a tuple."""
    if len(args) >= 6 or not isinstance(kwargs.get("callbacks"), (type(None), list, tuple)):
        return False
    try:
        return "callbacks" in inspect.signature(original).parameters
    except (TypeError, ValueError):
        return False


class SiteCallback(ProfileCallback):
    """:class:`ProfileCallback` for a call ``tfdiag run`` recorded: the batch range is
    chosen when ``fit`` says how many batches it runs, the recorder's session (cProfile and
    probes) of the call is stopped when training starts (``took_over``), and the report
    describes the call as the recorder saw it (its arguments, the facts read off them)."""

    def __init__(
        self,
        *,
        iterations: int,
        outer: CaptureSession,
        call: CallInfo,
        where: str,
        tf_profiler: bool,
        clock: Clock = time.perf_counter,
    ) -> None:
        super().__init__(batches=(1, 2), tf_profiler=tf_profiler, clock=clock)
        self.iterations = iterations
        self.source = "script"
        self._lock_held = True  # the recorder took it for this call
        self._warn = False
        self._outer = outer
        self._call = call
        self._where = where
        self.took_over = False
        #: A fit of fewer than 3 batches is left to the recorder's whole-call profile.
        self._skip = False

    def set_params(self, params: dict[str, Any]) -> None:
        super().set_params(params)
        total = fit_batches(self.params)
        self._skip = total is not None and total < 3
        self.batches = batch_range(total, self.iterations)

    def on_train_begin(self, logs: Any = None) -> None:
        if self._skip or self.took_over:
            return
        self._outer.profiler.disable()  # the recorder's profile of the call stops here
        self._outer.detach()
        self.took_over = True
        super().on_train_begin(logs)

    def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
        if self.took_over:
            super().on_train_batch_begin(batch, logs)

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        if self.took_over:
            super().on_train_batch_end(batch, logs)

    def on_train_end(self, logs: Any = None) -> None:
        if self.took_over:
            super().on_train_end(logs)

    def _call_info(self, own: CallInfo) -> CallInfo:
        # The call as the recorder saw it, and what only the callback knows: the batch range
        # and the fit's steps per epoch (Keras' params), which the user's arguments may not say.
        given = {k for k, _ in self._call.kwargs}
        extra = [(k, v) for k, v in own.kwargs if k not in given]
        return replace(self._call, kwargs=(*self._call.kwargs, *extra))

    def _lead_notes(self) -> list[str]:
        first, last = self.batches
        return [
            f"the fit call made at {self._where}, diagnosed from inside: tfdiag added its "
            f"ProfileCallback (batches {first}–{last}) to the call's callbacks"
        ]
