"""Scope a whole-program profile to the calls it is about.

A ``.prof`` of a whole script (``python -m cProfile -o run.prof train.py``) holds the
imports (TensorFlow's alone take seconds), the model's construction and whatever else the
script does once, around the Keras calls that repeat. Analysed whole, that one-time time
dilutes every steady-state share. :func:`scope_to` keeps only the time spent *inside* the
given entry functions (``Model.predict`` …): each function's counts and times are scaled
by the share of its time that runs under an entry, found through cProfile's caller edges
as attribution does (exact for one call path, a time-weighted estimate otherwise). What is
left out is reported apart, with the part spent importing.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from tfdiag.records.stats import CallerEdge, FunctionStat, ProfileStats

#: A function with less of its time than this inside the scope is left out.
_MIN_SHARE = 1e-6
#: Where Python's import machinery runs (frozen module names, as cProfile records them).
_IMPORT_FILES = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")


@dataclass(frozen=True)
class Scoped:
    """A profile scoped to its entry functions, and what was left out."""

    stats: ProfileStats
    inside_s: float
    outside_s: float
    #: Of ``outside_s``: the time under Python's import machinery.
    import_s: float


def _cum_weights(fn: FunctionStat) -> list[float]:
    """Each caller edge's share of ``fn``'s cumulative time (by calls when it has none):
    what a caller's whole subtree share carries down, unlike attribution's self time."""
    weights = [e.cum_s for e in fn.callers]
    if sum(weights) <= 0:
        weights = [float(e.calls) for e in fn.callers]
    total = sum(weights)
    return [w / total for w in weights] if total > 0 else [1.0 / len(fn.callers)] * len(weights)


def _callers_first(stats: ProfileStats) -> list[int]:
    """Function indices with every caller before its callees, cycles cut where they close
    (reverse post-order of a depth-first walk down the call edges, iterative)."""
    fns = stats.functions
    callees: list[list[int]] = [[] for _ in fns]
    for i, fn in enumerate(fns):
        for e in fn.callers:
            callees[e.caller].append(i)
    seen = [False] * len(fns)
    post: list[int] = []
    roots = [i for i, fn in enumerate(fns) if not fn.callers] + list(range(len(fns)))
    for root in roots:
        if seen[root]:
            continue
        seen[root] = True
        stack = [(root, iter(callees[root]))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if not seen[child]:
                    seen[child] = True
                    stack.append((child, iter(callees[child])))
                    break
            else:
                stack.pop()
                post.append(node)
    return post[::-1]


#: Passes over the order after the first: what flows around a cycle (a generator resumed
#: by ``next``, recursion) settles in a few.
_PASSES = 8


def in_scope_shares(stats: ProfileStats, entries: Collection[int]) -> list[float]:
    """Each function's share of its time that runs under one of ``entries`` (1 for them):
    the callers' shares mixed by the time each call edge carries, iterated to a fixed
    point so that cycles count."""
    chosen = set(entries)
    fns = stats.functions
    weights = [_cum_weights(fn) if fn.callers else [] for fn in fns]
    shares = [1.0 if i in chosen else 0.0 for i in range(len(fns))]
    order = [i for i in _callers_first(stats) if i not in chosen and fns[i].callers]
    for _ in range(1 + _PASSES):
        change = 0.0
        for i in order:
            new = min(sum(w * shares[e.caller] for w, e in zip(weights[i], fns[i].callers)), 1.0)
            change = max(change, abs(new - shares[i]))
            shares[i] = new
        if change < 1e-9:
            break
    return shares


def _import_s(stats: ProfileStats, shares: list[float]) -> float:
    """Time outside the scope spent importing: the outermost ``_find_and_load`` calls'."""
    best = 0.0
    for fn, share in zip(stats.functions, shares):
        if fn.file in _IMPORT_FILES and fn.name.endswith("_find_and_load"):
            best = max(best, fn.cum_s * (1.0 - share))
    return best


def _inside(
    stats: ProfileStats, shares: list[float], i: int, entries: set[int]
) -> tuple[float, float]:
    """Function ``i``'s calls and self time from inside the scope: its caller edges' calls
    and self times (cProfile keeps both per caller), each by its caller's share (all of an
    entry's)."""
    fn = stats.functions[i]
    if i in entries:
        return float(fn.calls), fn.self_s
    calls = sum(e.calls * shares[e.caller] for e in fn.callers)
    self_s = sum(e.self_s * shares[e.caller] for e in fn.callers)
    return min(calls, float(fn.calls)), min(self_s, fn.self_s)


def scope_to(stats: ProfileStats, entries: Collection[int]) -> Scoped:
    """The part of ``stats`` that ran inside the calls of ``entries`` (function indices).

    Cumulative times are scaled by each function's in-scope share, self times and call
    counts are what its in-scope callers' edges carry; an entry keeps all of its own and
    loses its callers."""
    chosen = set(entries)
    shares = in_scope_shares(stats, chosen)
    keep = [i for i, s in enumerate(shares) if s >= _MIN_SHARE]
    index = {old: new for new, old in enumerate(keep)}
    functions = []
    for i in keep:
        fn, share = stats.functions[i], shares[i]
        edges = tuple(
            CallerEdge(
                index[e.caller],
                round(e.calls * shares[e.caller]),
                round(e.primitive_calls * shares[e.caller]),
                e.self_s * shares[e.caller],
                e.cum_s * shares[e.caller],
            )
            for e in fn.callers
            if e.caller in index and i not in chosen
        )
        calls, self_s = _inside(stats, shares, i, chosen)
        primitive = calls * fn.primitive_calls / fn.calls if fn.calls else 0.0
        functions.append(
            FunctionStat(
                fn.file,
                fn.line,
                fn.name,
                round(calls),
                round(primitive),
                self_s,
                fn.cum_s * share,
                edges,
            )
        )
    scoped = ProfileStats(tuple(functions))
    outside = max(stats.total_s - scoped.total_s, 0.0)
    return Scoped(scoped, scoped.total_s, outside, min(_import_s(stats, shares), outside))
