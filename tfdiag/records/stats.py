"""Raw profile records: one row per function, keyed by (file, line, qualified name).

This is the only shape the analysis stages see. It is built from a live
``cProfile.Profile`` (with qualified names, so ``Model.predict`` and
``Sequential.predict`` never merge) or from a pstats dump, and it converts back
to the marshal dict that ``pstats.Stats`` and snakeviz read.
"""

from __future__ import annotations

import gc
import marshal
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, islice, repeat
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from tfdiag.records.errors import InputError
from tfdiag.records.fields import MAX_COUNT, MAX_SECONDS, MAX_TEXT
from tfdiag.records.index import FunctionIndex

#: A source line, or an index into the table.
MAX_LINE = 10**9
_SURROGATE = re.compile("[\ud800-\udfff]")

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


@dataclass(frozen=True, slots=True)
class FunctionStat:
    """One profiled function: totals over the whole profiled run (slots: a large profile
    has hundreds of thousands, each then a third smaller and quicker to read)."""

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

    @cached_property
    def index(self) -> FunctionIndex:
        """The table by module path, built on first use (the table never changes)."""
        return FunctionIndex(self.functions)

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

        A table already in canonical form (what cProfile writes) is checked column by column
        with built-ins (:func:`_canonical`); anything else is read value by value, which
        converts what it may and says in one line what it may not.

        Raises:
            InputError: when ``raw`` is not shaped like pstats data, or a count or time in
                it is not a finite number in range.
        """
        if not isinstance(raw, Mapping) or not raw:
            raise InputError("not pstats data (expected a non-empty function table)")
        with no_gc():
            fast = _canonical(raw)
        if fast is not None:
            return cls(fast)
        return cls._from_pstats_checked(raw)

    @classmethod
    def _from_pstats_checked(cls, raw: Mapping[Any, Any]) -> ProfileStats:
        index = {key: i for i, key in enumerate(raw)}
        functions = []
        try:
            for key, value in raw.items():
                if type(key) is not tuple or len(key) != 3:
                    raise InputError("not pstats data (a key is not (file, line, name))")
                file, line, name = key
                if type(file) is not str or type(line) is not int or type(name) is not str:
                    raise InputError("not pstats data (a key is not (file, line, name))")
                if type(value) is not tuple or len(value) != 5 or type(value[4]) is not dict:
                    raise InputError("not pstats data (an entry is not (cc, nc, tt, ct, callers))")
                cc, nc, tt, ct, callers = value
                where = f"the entry of {name[:80]!r}"
                edges = []
                for ckey, cval in callers.items():
                    if type(cval) is int:  # the old `profile` module stores counts only
                        e_nc = e_cc = cval
                        e_tt = e_ct = 0.0
                    elif type(cval) is tuple and len(cval) == 4:
                        e_nc, e_cc, e_tt, e_ct = cval
                    else:
                        raise InputError(
                            f"not pstats data ({where} has a caller of the wrong shape)"
                        )
                    caller = index.get(ckey)
                    if caller is not None:
                        edges.append(
                            CallerEdge(
                                caller,
                                _count(e_nc, where),
                                _count(e_cc, where),
                                _time(e_tt, where),
                                _time(e_ct, where),
                            )
                        )
                functions.append(
                    FunctionStat(
                        _name(file, where),
                        _line(line, where),
                        _name(name, where),
                        _count(nc, where),
                        _count(cc, where),
                        _time(tt, where),
                        _time(ct, where),
                        tuple(edges),
                    )
                )
        except TypeError as exc:  # an unhashable caller key
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
            with no_gc():  # 300k new tuples: the collector would rescan them as they come
                raw = marshal.loads(data)
        except (EOFError, ValueError, TypeError) as exc:
            raise InputError(f"not pstats data ({exc})") from None
        return cls.from_pstats(raw)

    # -- JSON (compact rows) -------------------------------------------------------

    def row_tuples(self) -> list[tuple[Any, ...]]:
        """:meth:`to_rows` as tuples (the caller edges as they are): the same JSON, without
        copying 300k values into new lists (half a second on a 100k-function table)."""
        return [
            (f.file, f.line, f.name, f.calls, f.primitive_calls, f.self_s, f.cum_s, f.callers)
            for f in self.functions
        ]

    def finite(self) -> bool:
        """Is every time in the table (the callers' too) a finite number?"""
        fns = self.functions
        edges = tuple(chain.from_iterable(f.callers for f in fns))
        return all(
            all(map(math.isfinite, column))
            for column in (
                map(_SELF_S, fns),
                map(_CUM_S, fns),
                map(_EDGE_SELF_S, edges),
                map(_EDGE_CUM_S, edges),
            )
        )

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
                list(map(list, f.callers)),  # (caller, calls, primitive_calls, self_s, cum_s)
            ]
            for f in self.functions
        ]

    @classmethod
    def from_rows(cls, rows: Iterable[Any]) -> ProfileStats:
        """Read back :meth:`to_rows`, every value checked for its type and range.

        Raises:
            InputError: a row of the wrong shape, or a value out of range.
        """
        functions = []
        for i, row in enumerate(rows):
            where = f"profile row {i}"
            if type(row) is not list or len(row) != 8 or type(row[7]) is not list:
                raise InputError(f"report's profile table has the wrong shape ({where})")
            file, line, name, calls, pcalls, self_s, cum_s, edges = row
            callers = []
            for edge in edges:
                if type(edge) is not list or len(edge) != 5:
                    raise InputError(f"report's profile table has the wrong shape ({where})")
                c, n, p, s, u = edge
                callers.append(
                    CallerEdge(
                        _line(c, where), _count(n, where), _count(p, where), _time(s, where),
                        _time(u, where),
                    )
                )  # fmt: skip
            functions.append(
                FunctionStat(
                    _name(file, where),
                    _line(line, where),
                    _name(name, where),
                    _count(calls, where),
                    _count(pcalls, where),
                    _time(self_s, where),
                    _time(cum_s, where),
                    tuple(callers),
                )
            )
        n = len(functions)
        if any(e.caller >= n for f in functions for e in f.callers):
            raise InputError("report's profile table has a caller index out of range")
        return cls(tuple(functions))


_SELF_S = attrgetter("self_s")
_CUM_S = attrgetter("cum_s")
_EDGE_SELF_S = itemgetter(3)
_EDGE_CUM_S = itemgetter(4)


def _count(value: Any, where: str) -> int:
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        raise InputError(f"{where}: a call count must be a whole number from 0 to {MAX_COUNT:,}")
    return value


def _line(value: Any, where: str) -> int:
    if type(value) is not int or not 0 <= value <= MAX_LINE:
        raise InputError(f"{where}: a line or index must be a whole number from 0 to {MAX_LINE:,}")
    return value


def _time(value: Any, where: str) -> float:
    if type(value) is int:
        value = float(value) if abs(value) <= MAX_SECONDS else math.inf
    if type(value) is not float or not -1.0 <= value <= MAX_SECONDS:
        raise InputError(f"{where}: a time must be a number from 0 to {MAX_SECONDS:g} s")
    return max(value, 0.0)  # a timer's rounding can leave a self time a hair below zero


def _name(value: Any, where: str) -> str:
    if type(value) is not str or len(value) > MAX_TEXT or _SURROGATE.search(value):
        raise InputError(f"{where}: a file or function name must be text (at most {MAX_TEXT:,})")
    return value


def _ints_in(column: tuple[Any, ...], high: int) -> bool:
    return not column or (
        set(map(type, column)) == {int} and min(column) >= 0 and max(column) <= high
    )


def _times_in(column: tuple[Any, ...]) -> bool:
    return not column or (
        set(map(type, column)) == {float}
        and min(column) >= 0.0
        and max(column) <= MAX_SECONDS
        and not any(map(math.isnan, column))
    )


def _names_in(column: tuple[Any, ...]) -> bool:
    return (
        set(map(type, column)) == {str}
        and max(map(len, column)) <= MAX_TEXT
        and _SURROGATE.search("".join(column)) is None
    )


def _canonical(raw: Mapping[Any, Any]) -> tuple[FunctionStat, ...] | None:
    """The table of a pstats dict whose every key, count and time is already what the
    value-by-value reader would keep (keys ``(str, int, str)``, whole counts and finite
    non-negative float times in range, caller entries of four), checked a column at a time
    with built-ins; None when anything is not, for that reader to convert or refuse."""
    keys = tuple(raw)
    values = tuple(raw.values())
    if set(map(type, keys)) != {tuple} or set(map(len, keys)) != {3}:
        return None
    if set(map(type, values)) != {tuple} or set(map(len, values)) != {5}:
        return None
    files, lines, names = zip(*keys)
    cc, nc, tt, ct, callers = zip(*values)
    if set(map(type, callers)) != {dict}:
        return None
    edges = tuple(chain.from_iterable(map(dict.values, callers)))
    if edges and (set(map(type, edges)) != {tuple} or set(map(len, edges)) != {4}):
        return None
    e_nc, e_cc, e_tt, e_ct = zip(*edges) if edges else ((), (), (), ())
    if not (
        _names_in(files)
        and _names_in(names)
        and _ints_in(lines, MAX_LINE)
        and all(_ints_in(c, MAX_COUNT) for c in (cc, nc, e_nc, e_cc))
        and all(_times_in(t) for t in (tt, ct, e_tt, e_ct))
    ):
        return None
    index = {key: i for i, key in enumerate(keys)}
    try:
        rows = list(map(index.get, chain.from_iterable(map(dict.keys, callers))))
    except TypeError:  # an unhashable caller key
        return None
    if None in rows:  # a caller the table does not hold: its edge is dropped
        return _rows_by_function(keys, values, index)
    # Every caller edge at once, then each function's run of them, in C loops.
    edge_rows = iter(
        list(map(tuple.__new__, repeat(CallerEdge), zip(rows, e_nc, e_cc, e_tt, e_ct)))
    )
    per_function = map(tuple, map(islice, repeat(edge_rows), map(len, callers)))
    return tuple(map(FunctionStat, files, lines, names, nc, cc, tt, ct, per_function))


def _rows_by_function(
    keys: tuple[Any, ...], values: tuple[Any, ...], index: dict[Any, int]
) -> tuple[FunctionStat, ...]:
    """The table of a canonical pstats dict whose callers the table may not all hold."""
    new = tuple.__new__
    return tuple(
        [
            FunctionStat(
                key[0],
                key[1],
                key[2],
                value[1],
                value[0],
                value[2],
                value[3],
                tuple(
                    [
                        new(CallerEdge, (at, *edge))
                        for caller, edge in value[4].items()
                        if (at := index.get(caller)) is not None
                    ]
                ),
            )
            for key, value in zip(keys, values)
        ]
    )


@contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic collector paused while a large table of acyclic tuples is built: it would
    otherwise rescan the growing heap every few hundred thousand allocations (half the
    time of reading a 100k-function profile).

    What was built meanwhile then goes straight to the oldest generation (``freeze`` and
    ``unfreeze`` move the lists of objects, scanning nothing), where a collection would have
    moved it after scanning it: resuming costs nothing, not a scan of every new object."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.freeze()
            gc.unfreeze()
            gc.enable()
