"""Raw profile records: one row per function, keyed by (file, line, qualified name).

This is the only shape the analysis stages see. It is built from a live
``cProfile.Profile`` (with qualified names, so ``Model.predict`` and
``Sequential.predict`` never merge) or from a pstats dump, and it converts back
to the marshal dict that ``pstats.Stats`` and snakeviz read.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from tfdiag.records.errors import InputError

#: Largest .prof we agree to unmarshal. marshal is not safe against hostile input;
#: the size cap and the shape check below are the guard (see docs/security.md).
MAX_PROF_BYTES = 512 * 1024 * 1024

FunctionKey = tuple[str, int, str]

_BUILTIN = re.compile(r"<(?:built-in method|method) '?([\w.]+)'?(?: of '([\w.]+)' objects)?>")


def builtin_name(label: str) -> str:
    """``<built-in method a.b.TFE_Py_Execute>`` → ``{TFE_Py_Execute}``."""
    m = _BUILTIN.fullmatch(label)
    if not m:
        return label
    method, owner = m.group(1), m.group(2)
    name = f"{owner.rsplit('.', 1)[-1]}.{method}" if owner else method.rsplit(".", 1)[-1]
    return "{" + name + "}"


class CallerEdge(NamedTuple):
    """Time a function spent when called from one caller (``caller`` indexes the table).

    A named tuple rather than a dataclass: a large profile has hundreds of thousands.
    """

    caller: int
    calls: int
    primitive_calls: int
    self_s: float
    cum_s: float


@dataclass(frozen=True)
class FunctionStat:
    """One profiled function: totals over the whole profiled run."""

    file: str
    line: int
    name: str
    calls: int
    primitive_calls: int
    self_s: float
    cum_s: float
    callers: tuple[CallerEdge, ...] = ()

    @property
    def key(self) -> FunctionKey:
        return (self.file, self.line, self.name)

    @property
    def short_name(self) -> str:
        """``file.py:Qual.name`` for display; builtins keep their own label."""
        if self.file == "~":
            return builtin_name(self.name)
        base = self.file.replace("\\", "/").rsplit("/", 1)[-1]  # Windows paths too
        return f"{base}:{self.name}"


@dataclass(frozen=True)
class ProfileStats:
    """The function table of one profiled run."""

    functions: tuple[FunctionStat, ...]

    @property
    def total_s(self) -> float:
        """Total profiled time: the sum of self times, which never overlaps."""
        return sum(f.self_s for f in self.functions)

    def minus(self, earlier: ProfileStats) -> ProfileStats:
        """What happened after ``earlier`` was taken, in this table's order.

        ``earlier`` is a snapshot of the same profiler (e.g. after the cold call);
        counts and times are subtracted per function and per caller edge.
        """
        before = {f.key: f for f in earlier.functions}
        keys = [f.key for f in self.functions]
        functions = []
        for fn in self.functions:
            old = before.get(fn.key)
            if old is None:
                functions.append(fn)
                continue
            old_edges = {earlier.functions[e.caller].key: e for e in old.callers}
            edges = []
            for e in fn.callers:
                o = old_edges.get(keys[e.caller])
                if o is None:
                    edges.append(e)
                elif e.calls > o.calls:
                    edges.append(
                        CallerEdge(
                            e.caller,
                            e.calls - o.calls,
                            max(e.primitive_calls - o.primitive_calls, 0),
                            max(e.self_s - o.self_s, 0.0),
                            max(e.cum_s - o.cum_s, 0.0),
                        )
                    )
            functions.append(
                FunctionStat(
                    fn.file,
                    fn.line,
                    fn.name,
                    max(fn.calls - old.calls, 0),
                    max(fn.primitive_calls - old.primitive_calls, 0),
                    max(fn.self_s - old.self_s, 0.0),
                    max(fn.cum_s - old.cum_s, 0.0),
                    tuple(edges),
                )
            )
        return ProfileStats(tuple(functions))

    # -- pstats interop -------------------------------------------------------------

    @classmethod
    def from_pstats(cls, raw: Mapping[Any, Any]) -> ProfileStats:
        """Build from the dict ``pstats.Stats.stats`` / a marshal dump holds.

        Raises:
            InputError: when ``raw`` is not shaped like pstats data.
        """
        if not isinstance(raw, Mapping) or not raw:
            raise InputError("not pstats data (expected a non-empty function table)")
        index = {key: i for i, key in enumerate(raw)}
        functions = []
        try:
            for key, value in raw.items():
                file, line, name = key
                if type(file) is not str or type(line) is not int or type(name) is not str:
                    raise InputError("not pstats data (a key is not (file, line, name))")
                cc, nc, tt, ct, callers = value
                edges = []
                for ckey, cval in callers.items():
                    if type(cval) is int:  # the old `profile` module stores counts only
                        e_nc = e_cc = cval
                        e_tt = e_ct = 0.0
                    else:
                        e_nc, e_cc, e_tt, e_ct = cval
                    caller = index.get(ckey)
                    if caller is not None:
                        edges.append(
                            CallerEdge(caller, int(e_nc), int(e_cc), float(e_tt), float(e_ct))
                        )
                functions.append(
                    FunctionStat(
                        file, line, name, int(nc), int(cc), float(tt), float(ct), tuple(edges)
                    )
                )
        except (TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"not pstats data (an entry has the wrong shape: {exc})") from None
        return cls(tuple(functions))

    def to_pstats(self) -> dict[FunctionKey, tuple[Any, ...]]:
        """The marshal-able dict ``pstats.Stats`` and snakeviz read."""
        out: dict[FunctionKey, tuple[Any, ...]] = {}
        for fn in self.functions:
            callers = {
                self.functions[e.caller].key: (e.calls, e.primitive_calls, e.self_s, e.cum_s)
                for e in fn.callers
            }
            out[fn.key] = (fn.primitive_calls, fn.calls, fn.self_s, fn.cum_s, callers)
        return out

    def to_prof_bytes(self) -> bytes:
        return marshal.dumps(self.to_pstats())

    @classmethod
    def from_prof_bytes(cls, data: bytes) -> ProfileStats:
        if len(data) > MAX_PROF_BYTES:
            raise InputError(f"pstats file is larger than {MAX_PROF_BYTES // 2**20} MiB")
        try:
            raw = marshal.loads(data)
        except (EOFError, ValueError, TypeError) as exc:
            raise InputError(f"not pstats data ({exc})") from None
        return cls.from_pstats(raw)

    # -- JSON (compact rows) -------------------------------------------------------

    def to_rows(self) -> list[list[Any]]:
        return [
            [
                f.file,
                f.line,
                f.name,
                f.calls,
                f.primitive_calls,
                f.self_s,
                f.cum_s,
                [[e.caller, e.calls, e.primitive_calls, e.self_s, e.cum_s] for e in f.callers],
            ]
            for f in self.functions
        ]

    @classmethod
    def from_rows(cls, rows: Iterable[Any]) -> ProfileStats:
        functions = []
        try:
            for row in rows:
                file, line, name, calls, pcalls, self_s, cum_s, edges = row
                functions.append(
                    FunctionStat(
                        str(file),
                        int(line),
                        str(name),
                        int(calls),
                        int(pcalls),
                        float(self_s),
                        float(cum_s),
                        tuple(
                            CallerEdge(int(c), int(n), int(p), float(s), float(u))
                            for c, n, p, s, u in edges
                        ),
                    )
                )
        except (TypeError, ValueError) as exc:
            raise InputError(f"report's profile table has the wrong shape ({exc})") from None
        n = len(functions)
        if any(e.caller < 0 or e.caller >= n for f in functions for e in f.callers):
            raise InputError("report's profile table has a caller index out of range")
        return cls(tuple(functions))
