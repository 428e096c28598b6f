"""``tfdiag run``'s call sites: the nearest line of the user's own code on the stack (the
script, or a file beside it that is not an installed package), and what the recorder keeps
of the calls made there."""

from __future__ import annotations

import linecache
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from tfdiag.capture.environment import describe_call, flavour_of
from tfdiag.capture.session import CaptureSession
from tfdiag.records.paths import PACKAGE_DIRS
from tfdiag.records.report import CallInfo
from tfdiag.records.stats import ProfileStats
from tfdiag.script.fit_probe import SiteCallback
from tfdiag.script.probes import SiteProbes

_TFDIAG_DIR = str(Path(__file__).resolve().parent.parent)

#: The compiled step function a Keras call reuses, by method: a new model has none, and
#: ``compile()`` resets it (Keras 3 and tf_keras), so its absence at a later call's entry
#: says the model was built or re-compiled since the last call.
_STEP_FUNCTIONS = {
    "fit": "train_function",
    "train_on_batch": "train_function",
    "evaluate": "test_function",
    "test_on_batch": "test_function",
    "predict": "predict_function",
    "predict_on_batch": "predict_function",
}


@dataclass
class Site:
    """The calls of one method made at one line of the user's code."""

    file: str
    line: int
    method: str
    owner: str
    flavour: str
    code: str
    call: CallInfo
    calls: int = 0
    total_s: float = 0.0
    errors: int = 0
    profiled_s: list[float] = field(default_factory=list)
    timed_s: list[float] = field(default_factory=list)
    #: cProfile and the probes of the site's profiled calls (from its first).
    session: CaptureSession | None = None
    cold: ProfileStats | None = None
    stats: ProfileStats | None = None
    probes: SiteProbes | None = None
    traced: int = 0
    #: The callback that diagnosed the site's first ``fit`` from inside, and that call's time.
    callback: SiteCallback | None = None
    first_s: float | None = None
    #: The model of the last call (a weak reference), and the later calls (after the
    #: first) made on a different model or on the same one re-compiled since.
    model: Callable[[], Any] | None = None
    new_model_calls: int = 0
    recompiled_calls: int = 0
    #: Weak references to the last call's arguments that can have one (arrays, tensors,
    #: datasets), and the later calls that passed one of those objects again (a training
    #: loop's data; a request handler's new data on every call passes none).
    inputs: tuple[weakref.ref[Any], ...] | None = None
    same_inputs_calls: int = 0

    def note_model(self, model: Any) -> None:
        """At a call's entry: was its model built or re-compiled since the last call?"""
        attr = _STEP_FUNCTIONS.get(self.method)
        if attr is None:
            return
        # No step function yet: a model used before (several models called in turn at one
        # line) still has its own.
        if self.model is not None and getattr(model, attr, False) is None:
            if self.model() is not model:
                self.new_model_calls += 1
            else:
                self.recompiled_calls += 1
        try:
            self.model = weakref.ref(model)
        except TypeError:  # not weakly referable: not a Keras model
            self.model = None

    def note_inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """At a call's entry: does it pass an argument object the last call passed?"""
        refs = []
        for value in (*args, *kwargs.values()):
            try:
                refs.append(weakref.ref(value))
            except TypeError:  # a list, a number, None: no identity to follow
                continue
        if self.inputs is not None:
            last = {id(o) for o in (r() for r in self.inputs) if o is not None}
            if any(id(r()) in last for r in refs):
                self.same_inputs_calls += 1
        self.inputs = tuple(refs)

    @property
    def call_facts(self) -> tuple[tuple[str, str], ...]:
        """What :meth:`note_model` and :meth:`note_inputs` saw, as call facts: the later
        calls, and of them those on a new or re-compiled model and those that passed an
        argument again (the facts a single call, or one without followable arguments, has
        not)."""
        facts = self.rebuild_facts
        if self.calls >= 2 and self.inputs:
            later = () if facts else (("calls.later", str(self.calls - 1)),)
            facts += (*later, ("calls.same_inputs", str(self.same_inputs_calls)))
        return facts

    @property
    def rebuild_facts(self) -> tuple[tuple[str, str], ...]:
        """What :meth:`note_model` saw, as call facts (none when nothing was rebuilt)."""
        if not (self.new_model_calls or self.recompiled_calls):
            return ()
        return (
            ("calls.later", str(max(self.calls - 1, 0))),
            ("calls.new_model", str(self.new_model_calls)),
            ("calls.recompiled", str(self.recompiled_calls)),
        )


class Sites:
    """A script's call sites by (file, line, method), each made on its first call."""

    def __init__(self, script: Path, new_probes: Callable[[], SiteProbes]) -> None:
        self.script = str(script.resolve())
        self.root = str(script.resolve().parent)
        self._new_probes = new_probes
        self._sites: dict[tuple[str, int, str], Site] = {}
        self._user: dict[str, bool] = {}
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[Site]:
        return iter(self._sites.values())

    def is_user(self, filename: str) -> bool:
        """Whether ``filename`` is the user's code: the script, or a file beside it that
        is neither tfdiag nor an installed package."""
        known = self._user.get(filename)
        if known is None:
            path = os.path.abspath(filename)
            known = not filename.startswith("<") and (
                path == self.script
                or (
                    path.startswith(self.root + os.sep)
                    and not path.startswith(_TFDIAG_DIR + os.sep)
                    and not PACKAGE_DIRS & set(Path(path).parts)
                )
            )
            self._user[filename] = known
        return known

    def at(
        self,
        caller: FrameType,
        method: str,
        model: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        described: Any = None,
        owner: str | None = None,
    ) -> Site:
        """The site of a call of ``method`` made from ``caller`` (or the nearest user frame
        above it); ``described`` and ``owner`` as :meth:`Recorder.call` takes them."""
        frame: FrameType | None = caller
        while frame is not None and not self.is_user(frame.f_code.co_filename):
            frame = frame.f_back
        where = frame or caller
        filename, line = where.f_code.co_filename, where.f_lineno
        key = (filename, line, method)
        site = self._sites.get(key)
        if site is None:
            path = os.path.abspath(filename)
            shown = os.path.relpath(path, self.root) if self.is_user(filename) else filename
            with self._lock:
                site = self._sites.setdefault(
                    key,
                    Site(
                        file=shown,
                        line=line,
                        method=method,
                        owner=type(model).__name__ if owner is None else owner,
                        flavour=flavour_of(model),
                        code=linecache.getline(filename, line).strip(),
                        call=describe_call(
                            getattr(model, method) if described is None else described,
                            args,
                            kwargs,
                        ),
                        probes=self._new_probes(),
                    ),
                )
        return site
