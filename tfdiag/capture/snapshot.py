"""cProfile's table as tfdiag's :class:`ProfileStats`: keyed by qualified name, without
tfdiag's own frames."""

from __future__ import annotations

import cProfile
from typing import Any

from tfdiag.records.function_stat import CallerEdge, FunctionKey, FunctionStat
from tfdiag.records.stats import ProfileStats

_OWN_FRAMES = frozenset({"<method 'disable' of '_lsprof.Profiler' objects>"})


def _label(code: Any) -> FunctionKey:
    if isinstance(code, str):
        return ("~", 0, code)
    return (code.co_filename, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))


def snapshot(profiler: cProfile.Profile) -> ProfileStats:
    """The profiler's table keyed by (file, line, *qualified* name), without tfdiag's frames.

    Like ``cProfile.Profile.snapshot_stats`` but with ``co_qualname``, so two
    methods both called ``predict`` stay apart; code objects that share a key
    (two lambdas on one line) are summed.
    """
    totals: dict[FunctionKey, list[float]] = {}
    edges: dict[FunctionKey, dict[FunctionKey, list[float]]] = {}
    for entry in profiler.getstats():
        key = _label(entry.code)
        if key[2] in _OWN_FRAMES:
            continue
        t = totals.setdefault(key, [0, 0, 0.0, 0.0])
        t[0] += entry.callcount
        t[1] += entry.callcount - entry.reccallcount
        t[2] += entry.inlinetime
        t[3] += entry.totaltime
        for sub in entry.calls or ():
            callee = _label(sub.code)
            if callee[2] in _OWN_FRAMES:
                continue
            e = edges.setdefault(callee, {}).setdefault(key, [0, 0, 0.0, 0.0])
            e[0] += sub.callcount
            e[1] += sub.callcount - sub.reccallcount
            e[2] += sub.inlinetime
            e[3] += sub.totaltime
    keys = list(totals)
    index = {k: i for i, k in enumerate(keys)}
    functions = []
    for key in keys:
        calls, pcalls, self_s, cum_s = totals[key]
        callers = tuple(
            CallerEdge(index[c], int(v[0]), int(v[1]), v[2], v[3])
            for c, v in edges.get(key, {}).items()
            if c in index
        )
        functions.append(
            FunctionStat(key[0], key[1], key[2], int(calls), int(pcalls), self_s, cum_s, callers)
        )
    return ProfileStats(tuple(functions))
