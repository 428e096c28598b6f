"""The script's lines under ``tfdiag run``: which of the user's lines the whole script spends
its time at, what each calls, and whether it ran inside a loop.

``tfdiag run`` profiles the Keras calls it instruments (each site's report has the line
sampler of its capture session); the script's other work — a layer built in a request
handler, a dataset counted every epoch, weights copied through NumPy between two calls —
happens between them, where no profiler is attached. A thread reads the main thread's
stack every few milliseconds for the whole run and notes, as the line sampler does, each of
the user's lines whose frame below is a framework's. tfdiag's own frames (the wrappers
around the instrumented calls) are looked through, and a line whose time below is tfdiag's
alone (its bookkeeping) is left out. Without cProfile there are no call counts: a line is
counted as *repeated* in a sample when it, or a line of the user's above it on that stack,
stands inside a ``for``/``while`` loop (read from the file's syntax tree once per file).
"""

from __future__ import annotations

import ast
import linecache
import sys
import threading
import time
from functools import lru_cache
from types import CodeType, FrameType

from tfdiag.capture.lines import (
    _FRAMEWORK,
    _MAX_DEPTH,
    _OWN,
    _USER,
    _key,
    _kind,
    looked_through,
    source_line,
)
from tfdiag.capture.switches import switch_lines
from tfdiag.records.clock import Clock
from tfdiag.records.lines import MAX_PLACES, LinePlace, LinesRecord

#: Seconds between two samples of the script.
INTERVAL_S = 0.005


@lru_cache(maxsize=256)
def _loop_lines(file: str) -> frozenset[int]:
    """Every line of ``file`` inside the body of a loop (``for``, ``while``, a
    comprehension): empty when the file cannot be read or parsed."""
    try:
        tree = ast.parse("".join(linecache.getlines(file)))
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            for stmt in node.body:
                end = getattr(stmt, "end_lineno", None) or stmt.lineno
                inside.update(range(stmt.lineno, end + 1))
            inside.add(node.lineno)  # the loop's own line runs once per iteration
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            end = getattr(node, "end_lineno", None) or node.lineno
            inside.update(range(node.lineno, end + 1))
    return frozenset(inside)


#: (user code, line, callee code or None, api code or None)
_Place = tuple[CodeType, int, "CodeType | None", "CodeType | None"]


def script_places(
    frame: FrameType | None, root: FrameType | None = None
) -> list[tuple[_Place, bool]]:
    """The user's lines on one stack that call into a framework, leaf first, each with
    whether it ran inside a loop (its own, or one of a user line above it). The walk stops
    at ``root``, the frame that runs the script: what is above it launched tfdiag (a
    console script in a virtual environment's ``bin/`` reads as a user's file, and its
    ``sys.exit(main())`` was "your line" at 100 %)."""
    found: list[tuple[_Place, int]] = []
    chain: list[tuple[CodeType, int]] = []
    below: FrameType | None = None
    api: CodeType | None = None
    framework_below = False
    depth = 0
    while frame is not None and frame is not root and depth < _MAX_DEPTH:
        if type(frame) is not FrameType:
            return []
        code = frame.f_code
        if looked_through(code):
            frame, depth = frame.f_back, depth + 1
            continue
        kind = _kind(code)
        if kind == _USER:
            callee = below.f_code if below is not None else None
            if callee is not None and _kind(callee) != _USER and framework_below:
                found.append(((code, frame.f_lineno, callee, api), len(chain)))
            chain.append((code, frame.f_lineno))
            api, framework_below = None, False
        elif kind == _FRAMEWORK:
            api, framework_below = code, True
        elif kind != _OWN:  # a wrapper: looked through, as tfdiag's own frames are
            framework_below = True
        below = frame
        frame = frame.f_back
        depth += 1
    loops = [line in _loop_lines(code.co_filename) for code, line in chain]
    # a line is repeated when it, or any user line above it (later in the chain), is in a loop
    above = [any(loops[i:]) for i in range(len(loops))]
    return [(place, above[at]) for place, at in found]


class ScriptSampler:
    """Samples the thread that makes it, from a daemon thread, until :meth:`stop`."""

    def __init__(self, interval_s: float = INTERVAL_S, clock: Clock = time.perf_counter) -> None:
        #: The frame that makes the sampler runs the script: the walk stops there.
        self._root: FrameType | None = sys._getframe(1)
        self.interval_s = interval_s
        self.clock = clock
        self.samples = 0
        self.errors = 0
        #: place → [samples, seconds, samples inside a loop]
        self.tally: dict[_Place, list[float]] = {}
        self._target = threading.get_ident()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tfdiag-script-lines", daemon=True)
        self._last = clock()

    def start(self) -> None:
        self._last = self.clock()
        try:
            self._thread.start()
        except RuntimeError:  # no thread: the run goes on without the script's lines
            self.errors += 1

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._root = None  # a frame kept holds its locals

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.sample()
            except Exception:  # a stack that changed under us: skip this sample
                self.errors += 1

    def sample(self) -> None:
        now = self.clock()
        elapsed, self._last = now - self._last, now
        self.samples += 1
        stack = sys._current_frames().get(self._target)
        for place, looped in script_places(stack, self._root):
            entry = self.tally.get(place)
            if entry is None:
                entry = self.tally[place] = [0, 0.0, 0]
            entry[0] += 1
            entry[1] += elapsed
            entry[2] += looped

    def record(self) -> LinesRecord | None:
        """What the run sampled (None: no sample)."""
        if not self.samples:
            return None
        ranked = sorted(self.tally.items(), key=lambda kv: kv[1][0], reverse=True)[:MAX_PLACES]
        places = tuple(
            LinePlace(
                file=code.co_filename,
                line=line,
                function=_key(code),
                callee=None if callee is None else _key(callee),
                api=None if api is None else _key(api),
                samples=int(n),
                seconds=float(s),
                repeated=int(r),
            )
            for (code, line, callee, api), (n, s, r) in ranked
        )
        switches = switch_lines({p.file for p in places})
        wanted = {(p.file, p.line) for p in places} | {(s.file, s.line) for s in switches if s.line}
        return LinesRecord(
            interval_s=self.interval_s,
            samples=self.samples,
            places=places,
            source=tuple(sorted((f, n, source_line(f, n)) for f, n in wanted)),
            switches=switches,
        )
