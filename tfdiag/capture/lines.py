"""The line sampler: which of the user's lines were running, and what each was calling,
during the steady-state calls of a capture session (all three drivers).

cProfile keys its table by function, so it knows that ``handle`` called
``StringLookup.__init__`` once per call, but not from which line. A thread reads the
profiled thread's stack every millisecond while the session is attached, and notes, for
every frame of the user's code whose frame below is a framework's, the line it stood on,
that callee, and the first function below it that is not a transparent wrapper (a
decorator, a dispatcher: what the line calls in effect). The stack is read, never
changed; the thread holds the GIL for the walk only (tens of microseconds a sample, ~2 %
of the profiled calls, which run under cProfile anyway). The analysis takes each line's
counts and times from cProfile's exact caller edges and the samples only to place an
edge on its line (:mod:`tfdiag.analysis.lines`).

A sample that meets tfdiag's own code before any of the user's lines is tfdiag's work
(the callback's batch hooks) and is left out; above the user's lines, tfdiag's driver
ends the walk. The cold call (call 0) is not sampled: its lines are build cost.
"""

from __future__ import annotations

import linecache
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from types import CodeType, FrameType

from tfdiag.capture.switches import switch_lines
from tfdiag.records.catalog import Category, default_catalog
from tfdiag.records.clock import Clock
from tfdiag.records.lines import MAX_CODE, MAX_PLACES, FunctionKey, LinePlace, LinesRecord
from tfdiag.records.paths import is_user_code, normalize_path

#: Seconds between two samples.
INTERVAL_S = 0.001
_MAX_DEPTH = 512

_USER, _FRAMEWORK, _WRAPPER, _OWN = range(4)
#: The kind of each code object seen (a code object lives as long as its function).
_KINDS: dict[CodeType, int] = {}


def _kind(code: CodeType) -> int:
    kind = _KINDS.get(code)
    if kind is None:
        file = code.co_filename
        if normalize_path(file).startswith("tfdiag/"):
            kind = _OWN
        elif is_user_code(file):
            kind = _USER
        else:
            rule = default_catalog().match(file, getattr(code, "co_qualname", code.co_name))
            kind = (
                _WRAPPER if rule is not None and rule.category is Category.WRAPPER else _FRAMEWORK
            )
        _KINDS[code] = kind
    return kind


#: The code objects of a comprehension (a frame of its own up to Python 3.11): the script
#: sampler looks through them, so that a line is the function's that holds it
#: (``train_step``, not ``<listcomp>``). A profiled call's lines keep them: they are matched
#: with cProfile's rows, where a comprehension is a function of its own.
COMPREHENSIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})


def looked_through(code: CodeType) -> bool:
    """A comprehension of the user's: its frame is part of the function that holds it."""
    return code.co_name in COMPREHENSIONS and _kind(code) == _USER


def _key(code: CodeType) -> FunctionKey:
    return (code.co_filename, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))


#: (user code, line, callee code or None, api code or None)
_Place = tuple[CodeType, int, "CodeType | None", "CodeType | None"]


def places_of(frame: FrameType | None) -> list[_Place] | None:
    """The user's lines on one stack, leaf first, each with its callee and api; None when
    the stack is tfdiag's own work (or changed while it was read)."""
    out: list[_Place] = []
    below: FrameType | None = None
    api: CodeType | None = None
    depth = 0
    while frame is not None and depth < _MAX_DEPTH:
        if type(frame) is not FrameType:
            return None
        code = frame.f_code
        kind = _kind(code)
        if kind == _OWN:
            return out if out else None
        if kind == _USER:
            callee = below.f_code if below is not None else None
            if callee is None or _kind(callee) != _USER:
                out.append((code, frame.f_lineno, callee, api if callee is not None else None))
            api = None
        elif kind == _FRAMEWORK:
            api = code
        below = frame
        frame = frame.f_back
        depth += 1
    return out


class LineSampler:
    """A :class:`~tfdiag.capture.session.Probe`: samples the thread that attaches it while
    a steady-state call (``set_call(i)``, ``i ≥ 1``) runs; its record is the report's
    ``lines``."""

    field = "lines"

    def __init__(self, interval_s: float = INTERVAL_S, clock: Clock = time.perf_counter) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self.call = 0
        #: call index → place → [samples, seconds]
        self.tallies: dict[int, dict[_Place, list[float]]] = {}
        #: call index → samples taken inside that call
        self.taken: dict[int, int] = {}
        self.errors = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._target = 0
        self._last = 0.0

    @staticmethod
    def applies(backend: str | None) -> bool:
        """Python's own frames: on every backend."""
        return True

    def attach(self) -> AbstractContextManager[bool]:
        return self._sampling()

    @contextmanager
    def _sampling(self) -> Iterator[bool]:
        self._target = threading.get_ident()
        self._stop = threading.Event()
        self._last = self.clock()
        thread = threading.Thread(target=self._run, name="tfdiag-lines", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread could be started: no lines, the call goes on
            yield False
            return
        self._thread = thread
        try:
            yield True
        finally:
            self._stop.set()
            thread.join()
            self._thread = None

    def set_call(self, i: int) -> None:
        self.call = i
        self._last = self.clock()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.sample()
            except Exception:  # a stack that changed under us: skip this sample
                self.errors += 1

    def sample(self) -> None:
        """Read the target thread's stack once; the time since the last sample goes to it."""
        now = self.clock()
        elapsed, self._last = now - self._last, now
        call = self.call
        if call < 1:
            return
        found = places_of(sys._current_frames().get(self._target))
        if found is None:
            return
        self.taken[call] = self.taken.get(call, 0) + 1
        tally = self.tallies.setdefault(call, {})
        for place in found:
            entry = tally.get(place)
            if entry is None:
                tally[place] = [1, elapsed]
            else:
                entry[0] += 1
                entry[1] += elapsed

    def record(self, calls: int | None = None) -> LinesRecord | None:
        """What calls ``1`` to ``calls - 1`` sampled (None: all); None when nothing was."""
        kept = [c for c in self.tallies if calls is None or c < calls]
        merged: dict[_Place, list[float]] = {}
        for c in kept:
            for place, (n, s) in self.tallies[c].items():
                entry = merged.setdefault(place, [0, 0.0])
                entry[0] += n
                entry[1] += s
        taken = sum(n for c, n in self.taken.items() if calls is None or c < calls)
        if not taken:
            return None
        ranked = sorted(merged.items(), key=lambda kv: kv[1][0], reverse=True)[:MAX_PLACES]
        places = tuple(
            LinePlace(
                file=code.co_filename,
                line=line,
                function=_key(code),
                callee=None if callee is None else _key(callee),
                api=None if api is None else _key(api),
                samples=int(n),
                seconds=float(s),
            )
            for (code, line, callee, api), (n, s) in ranked
        )
        switches = switch_lines({p.file for p in places})
        wanted = {(p.file, p.line) for p in places}
        wanted |= {(s.file, s.line) for s in switches if s.line}
        return LinesRecord(
            interval_s=self.interval_s,
            samples=taken,
            places=places,
            source=tuple(sorted((f, n, source_line(f, n)) for f, n in wanted)),
            switches=switches,
        )

    def dropped_note(self) -> str | None:
        return f"{self.errors} line sample(s) could not be read" if self.errors else None


def source_line(file: str, line: int) -> str:
    """``file:line``'s text, stripped and cut to :data:`MAX_CODE` ("" when unreadable)."""
    try:
        code = linecache.getline(file, line).strip()
    except Exception:  # noqa: BLE001 - a loader that raises: no text, the record stays
        return ""
    return code if len(code) <= MAX_CODE else code[: MAX_CODE - 1] + "…"


def caller_line(frame: FrameType | None = None) -> tuple[str, int, str]:
    """The nearest line of the user's code on the calling thread's stack, above tfdiag's
    and the frameworks' frames: the line that made the profiled call (``file``, ``line``,
    its text); ``("", 0, "")`` when there is none (a call from a notebook cell's
    ``exec`` counts as the user's, an embedded interpreter may have none)."""
    frame = frame if frame is not None else sys._getframe(1)
    depth = 0
    while frame is not None and depth < _MAX_DEPTH:
        code = frame.f_code
        if _kind(code) == _USER:
            return code.co_filename, frame.f_lineno, source_line(code.co_filename, frame.f_lineno)
        frame = frame.f_back
        depth += 1
    return "", 0, ""
