"""The function table as a saved report holds it: one JSON row per function, its caller
edges ``(caller, calls, primitive_calls, self_s, cum_s)`` inline, and the rows read back
with every value checked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from tfdiag.records.errors import InputError
from tfdiag.records.function_stat import (
    CallerEdge,
    FunctionStat,
    check_count,
    check_line,
    check_name,
    check_time,
)


def to_rows(functions: Sequence[FunctionStat]) -> list[list[Any]]:
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
        for f in functions
    ]


def row_tuples(functions: Sequence[FunctionStat]) -> list[tuple[Any, ...]]:
    """:func:`to_rows` as tuples (the caller edges as they are): the same JSON, without
    copying 300k values into new lists (half a second on a 100k-function table)."""
    return [
        (f.file, f.line, f.name, f.calls, f.primitive_calls, f.self_s, f.cum_s, f.callers)
        for f in functions
    ]


def from_rows(rows: Iterable[Any]) -> tuple[FunctionStat, ...]:
    """Read back :func:`to_rows`, every value checked for its type and range.

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
                    check_line(c, where), check_count(n, where), check_count(p, where),
                    check_time(s, where), check_time(u, where),
                )
            )  # fmt: skip
        functions.append(
            FunctionStat(
                check_name(file, where),
                check_line(line, where),
                check_name(name, where),
                check_count(calls, where),
                check_count(pcalls, where),
                check_time(self_s, where),
                check_time(cum_s, where),
                tuple(callers),
            )
        )
    n = len(functions)
    if any(e.caller >= n for f in functions for e in f.callers):
        raise InputError("report's profile table has a caller index out of range")
    return tuple(functions)
