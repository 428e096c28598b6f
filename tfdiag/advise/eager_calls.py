"""The framework calls the user's code makes that dispatch ops eagerly, and what they cost:
a Keras model or layer called outside any graph (an RL agent's actor, once per environment
step), `tf.image` ops on one image at a time, a metric updated by hand. Their Python — the
layers, the op wrappers, the variable reads — is what running them inside a graph removes,
whatever the number of graph calls beside them.

Read off cProfile's caller edges, so each figure is an estimate: a wrapper frame (one row
for every function it decorates) is taken to call what it wraps most, and the kernels are
those of the dispatches whose heaviest caller path goes through an entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tfdiag.advise.evidence import category_of
from tfdiag.analysis.pipeline import Analysis
from tfdiag.records.catalog import Category
from tfdiag.records.paths import is_user_code

#: Roles of calls that run a graph (a tf.function, its machinery) or a Keras loop (``fit``,
#: ``predict``: their own findings say what they cost), not eager ops one by one.
_NOT_EAGER = ("function-call", "function-machinery", "graph-call", "entry", "step")


@dataclass(frozen=True)
class EagerCalls:
    """Framework functions the user's code calls that dispatch eager ops, in steady
    seconds: ``seconds`` in all (graphs they call left out), ``kernel_s`` of it in the ops'
    kernels (which stay in a graph), and the heaviest one with the user function calling it."""

    seconds: float
    kernel_s: float
    entry: int
    caller: int


def _ancestors(analysis: Analysis, i: int) -> set[int]:
    """Every function on some call path to ``i`` (through all caller edges)."""
    fns = analysis.steady.functions
    seen, todo = {i}, [i]
    while todo:
        for e in fns[todo.pop()].callers:
            if e.caller not in seen:
                seen.add(e.caller)
                todo.append(e.caller)
    return seen


def _heaviest_path_reaches(analysis: Analysis, i: int, targets: set[int]) -> int | None:
    """The first of ``targets`` on the heaviest caller path up from ``i``, if any."""
    fns = analysis.steady.functions
    seen = {i}
    while i not in targets:
        if not fns[i].callers:
            return None
        i = max(fns[i].callers, key=lambda e: e.cum_s).caller
        if i in seen:
            return None
        seen.add(i)
    return i


def eager_calls(
    analysis: Analysis,
    dispatch: int,
    *,
    dispatch_s: float,
    excluded: Callable[[int], bool],
    unclaimed: Callable[[int], float],
    graph_s_under: Callable[[int], float],
) -> EagerCalls | None:
    """The framework functions called from the user's code (through wrapper frames), on a
    path to the eager dispatch ``dispatch`` (``TFE_Py_FastPathExecute``), that are neither
    ``excluded`` (another finding's cause: a model built or loaded, an object made) nor a
    graph call, a Keras loop or a builtin. Each user caller's edge, and each entry, counts
    for its ``unclaimed`` share (a user function traced into a graph is not eager, nor a
    tf.data op the pipeline runs); ``graph_s_under`` an entry is left out; the kernels are
    the dispatch's self time less ``dispatch_s`` per op, on the edges whose heaviest path
    goes through an entry."""
    fns = analysis.steady.functions
    up = _ancestors(analysis, dispatch)
    # What each function on those paths calls (all its callees, graph calls included).
    below: dict[int, list[tuple[int, float]]] = {}
    for k, fn in enumerate(fns):
        for e in fn.callers:
            if e.caller in up:
                below.setdefault(e.caller, []).append((k, e.cum_s))

    seconds: dict[int, float] = {}
    callers: dict[int, dict[int, float]] = {}

    def add(k: int, s: float, user: int, depth: int) -> None:
        if is_user_code(fns[k].file) or s <= 0:
            return
        if category_of(analysis, k) is Category.WRAPPER:
            # A wrapper frame (Keras' traceback filter) is one row for everything it wraps,
            # called from anywhere: this call is taken to be of what it wraps most, for at
            # most that function's time through it.
            under = [c for c in below.get(k, ()) if not is_user_code(fns[c[0]].file)]
            if under and depth > 0:
                c, cs = max(under, key=lambda u: u[1])
                add(c, min(s, cs), user, depth - 1)
            return
        if k not in up or fns[k].file == "~" or _graph_entry(analysis, k):
            return  # not eager work, or a builtin (`sum` over a generator) that calls back
        if excluded(k):
            return
        s *= unclaimed(k)  # the share of it run under another finding's culprit is that one's
        seconds[k] = seconds.get(k, 0.0) + s
        callers.setdefault(k, {})[user] = callers.get(k, {}).get(user, 0.0) + s

    for u in up:
        if u != dispatch and is_user_code(fns[u].file):
            weight = unclaimed(u)
            for k, s in below.get(u, ()):
                add(k, s * weight, u, 3)
    if not seconds:
        return None
    kept = {
        k: max(s - graph_s_under(k) * min(s / fns[k].cum_s, 1.0), 0.0)
        for k, s in seconds.items()
        if fns[k].cum_s > 0
    }
    kept = {k: s for k, s in kept.items() if s > 0}
    if not kept:
        return None
    entries = set(kept)
    kernel_s = 0.0
    for e in fns[dispatch].callers:
        if _heaviest_path_reaches(analysis, e.caller, entries) is not None:
            kernel_s += max(e.self_s - e.calls * dispatch_s, 0.0)
    entry = max(kept, key=lambda k: kept[k])
    caller = max(callers[entry], key=lambda u: callers[entry][u])
    return EagerCalls(sum(kept.values()), kernel_s, entry, caller)


def _graph_entry(analysis: Analysis, k: int) -> bool:
    return any(analysis.has_role(k, role) for role in _NOT_EAGER)
