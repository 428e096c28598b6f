"""Raw profile records: the function table of one profiled run.

This is the only shape the analysis stages see. It is built from a live
``cProfile.Profile`` (with qualified names, so ``Model.predict`` and
``Sequential.predict`` never merge) or from a pstats dump, and it converts back
to the marshal dict that ``pstats.Stats`` and snakeviz read. Its rows are
:mod:`tfdiag.records.function_stat`; its pstats form is :mod:`tfdiag.records.pstats_table`,
its JSON rows :mod:`tfdiag.records.stats_rows`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any

from tfdiag.records import pstats_table, stats_rows
from tfdiag.records.function_stat import CallerEdge, FunctionKey, FunctionStat, builtin_name
from tfdiag.records.gc_pause import no_gc
from tfdiag.records.index import FunctionIndex

# Imported from here by advise/ and analysis/ (and the benchmarks run against older trees).
__all__ = ["CallerEdge", "FunctionKey", "FunctionStat", "ProfileStats", "builtin_name", "no_gc"]

_SELF_S = attrgetter("self_s")
_CUM_S = attrgetter("cum_s")
_EDGE_SELF_S = itemgetter(3)
_EDGE_CUM_S = itemgetter(4)


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

    # -- pstats interop (records/pstats_table.py) -------------------------------------

    @classmethod
    def from_pstats(cls, raw: Mapping[Any, Any]) -> ProfileStats:
        """Build from the dict ``pstats.Stats.stats`` / a marshal dump holds.

        Raises:
            InputError: when ``raw`` is not shaped like pstats data, or a count or time in
                it is not a finite number in range.
        """
        return cls(pstats_table.from_pstats(raw))

    def to_pstats(self) -> dict[FunctionKey, tuple[Any, ...]]:
        """The marshal-able dict ``pstats.Stats`` and snakeviz read."""
        return pstats_table.to_pstats(self.functions)

    def to_prof_bytes(self) -> bytes:
        return pstats_table.to_prof_bytes(self.functions)

    @classmethod
    def from_prof_bytes(cls, data: bytes) -> ProfileStats:
        return cls(pstats_table.from_prof_bytes(data))

    # -- JSON (compact rows, records/stats_rows.py) -----------------------------------

    def row_tuples(self) -> list[tuple[Any, ...]]:
        """:meth:`to_rows` as tuples (the caller edges as they are): the same JSON, without
        copying 300k values into new lists."""
        return stats_rows.row_tuples(self.functions)

    def to_rows(self) -> list[list[Any]]:
        return stats_rows.to_rows(self.functions)

    @classmethod
    def from_rows(cls, rows: Iterable[Any]) -> ProfileStats:
        """Read back :meth:`to_rows`, every value checked for its type and range.

        Raises:
            InputError: a row of the wrong shape, or a value out of range.
        """
        return cls(stats_rows.from_rows(rows))
