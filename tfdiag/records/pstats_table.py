"""The function table as pstats holds it: the dict ``pstats.Stats`` and snakeviz read, the
marshal bytes of a ``.prof``, and both read back, every value checked.

marshal is not safe against hostile input: the size cap and the shape checks here are the
guard (see docs/security.md).
"""

from __future__ import annotations

import marshal
import math
from collections.abc import Mapping, Sequence
from itertools import chain, islice, repeat
from typing import Any

from tfdiag.records.errors import InputError
from tfdiag.records.fields import MAX_COUNT, MAX_SECONDS, MAX_TEXT
from tfdiag.records.function_stat import (
    MAX_LINE,
    SURROGATE,
    CallerEdge,
    FunctionKey,
    FunctionStat,
    check_count,
    check_line,
    check_name,
    check_time,
)
from tfdiag.records.gc_pause import no_gc

#: Largest .prof we agree to unmarshal.
MAX_PROF_BYTES = 512 * 1024 * 1024

Functions = tuple[FunctionStat, ...]


def to_pstats(functions: Sequence[FunctionStat]) -> dict[FunctionKey, tuple[Any, ...]]:
    """The marshal-able dict ``pstats.Stats`` and snakeviz read."""
    out: dict[FunctionKey, tuple[Any, ...]] = {}
    for fn in functions:
        callers = {
            functions[e.caller].key: (e.calls, e.primitive_calls, e.self_s, e.cum_s)
            for e in fn.callers
        }
        out[fn.key] = (fn.primitive_calls, fn.calls, fn.self_s, fn.cum_s, callers)
    return out


def to_prof_bytes(functions: Sequence[FunctionStat]) -> bytes:
    """The bytes of a ``.prof`` file: :func:`to_pstats`, marshalled."""
    return marshal.dumps(to_pstats(functions))


def from_prof_bytes(data: bytes) -> Functions:
    """The table of a ``.prof`` file's bytes (:func:`from_pstats` of what they unmarshal to)."""
    if len(data) > MAX_PROF_BYTES:
        raise InputError(f"pstats file is larger than {MAX_PROF_BYTES // 2**20} MiB")
    try:
        with no_gc():  # 300k new tuples: the collector would rescan them as they come
            raw = marshal.loads(data)
    except (EOFError, ValueError, TypeError) as exc:
        raise InputError(f"not pstats data ({exc})") from None
    return from_pstats(raw)


def from_pstats(raw: Mapping[Any, Any]) -> Functions:
    """The table of the dict ``pstats.Stats.stats`` / a marshal dump holds.

    A table already in canonical form (what cProfile writes) is checked column by column
    with built-ins (:func:`_canonical`); anything else is read value by value
    (:func:`checked`), which converts what it may and says in one line what it may not.

    Raises:
        InputError: when ``raw`` is not shaped like pstats data, or a count or time in
            it is not a finite number in range.
    """
    if not isinstance(raw, Mapping) or not raw:
        raise InputError("not pstats data (expected a non-empty function table)")
    with no_gc():
        fast = _canonical(raw)
    if fast is not None:
        return fast
    return checked(raw)


def checked(raw: Mapping[Any, Any]) -> Functions:
    """The table of a pstats dict read value by value, each converted or refused."""
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
                    raise InputError(f"not pstats data ({where} has a caller of the wrong shape)")
                caller = index.get(ckey)
                if caller is not None:
                    edges.append(
                        CallerEdge(
                            caller,
                            check_count(e_nc, where),
                            check_count(e_cc, where),
                            check_time(e_tt, where),
                            check_time(e_ct, where),
                        )
                    )
            functions.append(
                FunctionStat(
                    check_name(file, where),
                    check_line(line, where),
                    check_name(name, where),
                    check_count(nc, where),
                    check_count(cc, where),
                    check_time(tt, where),
                    check_time(ct, where),
                    tuple(edges),
                )
            )
    except TypeError as exc:  # an unhashable caller key
        raise InputError(f"not pstats data (an entry has the wrong shape: {exc})") from None
    return tuple(functions)


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
        and SURROGATE.search("".join(column)) is None
    )


def _canonical(raw: Mapping[Any, Any]) -> Functions | None:
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
) -> Functions:
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
