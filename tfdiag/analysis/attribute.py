"""Stage 3: attribute every second of self time to one culprit category — no overlap.

Each function's *self* time goes to the nearest enclosing culprit on its call path:
the function itself if a catalog rule names it, else whatever its callers resolve
to, split by how much of its time each caller accounts for (cProfile's caller
edges). Wrapper frames are looked through. The user's own functions keep their
self time as *user code*, but framework code called from them without any culprit
in between is *other*. Because only self time is distributed, category totals sum
to the profiled total and nested functions are never counted twice.

cProfile records one caller level, not full stacks, so a function reached along
several paths is split by its per-caller time: exact for a single path, a
time-weighted estimate otherwise (the sampling probe gives full stacks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tfdiag.analysis.classify import Classification, CostClass
from tfdiag.records.catalog import Catalog, Category, Rule
from tfdiag.records.paths import is_user_code
from tfdiag.records.stats import FunctionStat, ProfileStats

Dist = Mapping[Category, float]
_OTHER: Dist = {Category.OTHER: 1.0}
_USER: Dist = {Category.USER_CODE: 1.0}
#: Contexts a weak rule's time does not go to: no culprit, or a conversion.
_WEAK_KEEPS = frozenset({Category.OTHER, Category.TENSOR_CONVERSION})


@dataclass(frozen=True)
class Attribution:
    """Seconds of self time per category, overall and per cost class."""

    by_category: Mapping[Category, float]
    by_class: Mapping[tuple[Category, CostClass], float]
    total_s: float

    def share(self, category: Category) -> float:
        return self.by_category.get(category, 0.0) / self.total_s if self.total_s else 0.0

    def seconds(self, category: Category, cost: CostClass | None = None) -> float:
        if cost is None:
            return self.by_category.get(category, 0.0)
        return self.by_class.get((category, cost), 0.0)


def match_rules(stats: ProfileStats, catalog: Catalog) -> tuple[Rule | None, ...]:
    return catalog.match_table(stats.functions)


def edge_weights(fn: FunctionStat) -> list[float]:
    """Each caller edge's share of ``fn``'s time (by self time, else by calls)."""
    weights = [e.self_s for e in fn.callers]
    if sum(weights) <= 0:
        weights = [float(e.calls) for e in fn.callers]
    if sum(weights) <= 0:
        weights = [1.0] * len(fn.callers)
    total = sum(weights)
    return [w / total for w in weights]


def _mix(parts: Sequence[tuple[float, Dist]]) -> Dist:
    first = parts[0][1] if parts else _OTHER
    if all(dist is first for _, dist in parts):  # one caller, or callers that agree
        return first
    out: dict[Category, float] = {}
    for weight, dist in parts:
        for cat, share in dist.items():
            out[cat] = out.get(cat, 0.0) + weight * share
    total = sum(out.values())
    if total <= 0:
        return _OTHER
    # Weights and caller mixes are normalised already; renormalise only after a cycle cut.
    return out if abs(total - 1.0) < 1e-9 else {c: v / total for c, v in out.items()}


def _is_strong(rule: Rule | None) -> bool:
    return rule is not None and rule.category is not Category.WRAPPER and not rule.weak


def propagate(fns: Sequence[FunctionStat], direct: Callable[[int], Dist | None]) -> list[Dist]:
    """Each function's distribution: ``direct(i)`` where it says, else its callers' mixed by
    the time each accounts for (recursively; a root with nothing of its own is OTHER).
    Iterative, so deep call chains need no recursion; a cycle is cut where it closes.

    Functions are settled in table order, each when first reached; cProfile enters a caller
    before its callees, so nearly every function finds its callers settled and is settled in
    one step, without the walk."""
    n = len(fns)
    directs = [direct(i) for i in range(n)]
    result: list[Dist | None] = [None] * n
    in_progress = [False] * n
    for start in range(n):
        if result[start] is not None:
            continue
        stack = [start]
        while stack:
            i = stack[-1]
            if result[i] is not None:
                stack.pop()
                continue
            d = directs[i]
            fn = fns[i]
            callers = fn.callers
            if d is not None or not callers:
                result[i] = d if d is not None else _OTHER
                stack.pop()
                continue
            first = result[callers[0][0]]  # [0]: the caller's row
            agree = bool(first)
            for e in callers:
                r = result[e[0]]
                if r is None:
                    break
                agree = agree and r is first
            else:  # every caller settled: what the walk below would find, in one step
                result[i] = first if agree else _from_callers(fn, result)
                in_progress[i] = False
                stack.pop()
                continue
            pending = [
                e.caller for e in callers if result[e.caller] is None and not in_progress[e.caller]
            ]
            if pending and not in_progress[i]:
                in_progress[i] = True
                stack.extend(pending)
                continue
            result[i] = _from_callers(fn, result)
            in_progress[i] = False
            stack.pop()
    return [r if r is not None else _OTHER for r in result]


def _from_callers(fn: FunctionStat, result: Sequence[Dist | None]) -> Dist:
    """``fn``'s callers' distributions mixed by the time each accounts for (a caller not
    settled yet closes a cycle, and is left out)."""
    known = [r or _OTHER for e in fn.callers if (r := result[e.caller]) is not None]
    if not known:
        return _OTHER
    first = known[0]
    if all(d is first for d in known):  # callers that agree: no weights needed
        return first
    weights = edge_weights(fn)
    return _mix(
        [
            (w, result[e.caller] or _OTHER)
            for w, e in zip(weights, fn.callers)
            if result[e.caller] is not None
        ]
    )


def claim_distributions(stats: ProfileStats, rules: Sequence[Rule | None]) -> tuple[Dist, ...]:
    """For each function: how much of its time runs under a *claiming* culprit (a Keras
    callback hook, a Keras data adapter calling the user's ``__getitem__``), by category;
    OTHER is the unclaimed rest. Another culprit in between ends the claim."""

    if not any(rule is not None and rule.claims and rule.category is not None for rule in rules):
        return (_OTHER,) * len(rules)  # nothing claims: what the walk would say of each

    def direct(i: int) -> Dist | None:
        rule = rules[i]
        if rule is not None and rule.claims and rule.category is not None:
            return {rule.category: 1.0}
        return _OTHER if _is_strong(rule) else None

    return tuple(propagate(stats.functions, direct))


def inherited_distributions(
    stats: ProfileStats,
    rules: Sequence[Rule | None],
    claims: Sequence[Dist] | None = None,
) -> tuple[Dist, ...]:
    """For each function: the culprit mix its callees inherit (the nearest enclosing culprit).

    The user's own code stops a culprit's reach (what it calls is *other*) unless it runs
    under a claiming culprit: then its callees inherit the claim.
    """
    fns = stats.functions
    if claims is None:
        claims = claim_distributions(stats, rules)
    user = _user_rows(stats)

    def direct(i: int) -> Dist | None:
        rule = rules[i]
        if _is_strong(rule):
            assert rule is not None and rule.category is not None  # matched: categorizing
            return {rule.category: 1.0}
        if rule is None and user[i]:
            return claims[i]
        return None

    return tuple(propagate(fns, direct))


def own_distributions(
    stats: ProfileStats,
    rules: Sequence[Rule | None],
    inherited: Sequence[Dist],
    claims: Sequence[Dist] | None = None,
) -> tuple[Dist, ...]:
    """For each function: where its own self time goes.

    A weak rule's time goes where its call path's nearest culprit says (a ``MakeIterator``
    op run for tf.data is input pipeline), else to its own category; the user's own code
    keeps its time as *user code*, except the part that runs under a claiming culprit.
    """
    if claims is None:
        claims = claim_distributions(stats, rules)
    user = _user_rows(stats)
    out: list[Dist] = []
    for i, rule in enumerate(rules):
        if rule is not None and rule.weak and rule.category is not None:
            # An op run for a culprit is that culprit's; but an op converting an argument is
            # still an op, so a conversion's context does not take it.
            dist = {c: s for c, s in inherited[i].items() if c not in _WEAK_KEEPS}
            rest = 1.0 - sum(dist.values())
            if rest > 1e-12:
                dist[rule.category] = dist.get(rule.category, 0.0) + rest
            out.append(dist)
        elif rule is None and user[i]:
            claim = claims[i]
            if claim is _OTHER:
                out.append(_USER)
            else:
                out.append(
                    {Category.USER_CODE if c is Category.OTHER else c: s for c, s in claim.items()}
                )
        else:
            out.append(inherited[i])
    return tuple(out)


def _user_rows(stats: ProfileStats) -> list[bool]:
    """Is each row the user's own code? Decided once per distinct file."""
    files: dict[str, bool] = {}
    return [
        files[f] if (f := fn.file) in files else files.setdefault(f, is_user_code(f))
        for fn in stats.functions
    ]


def attribute(
    stats: ProfileStats,
    rules: Sequence[Rule | None],
    classes: Sequence[Classification],
    own: Sequence[Dist] | None = None,
) -> Attribution:
    """Split the profiled total over categories (and cost classes) without overlap."""
    if own is None:
        claims = claim_distributions(stats, rules)
        own = own_distributions(stats, rules, inherited_distributions(stats, rules, claims), claims)
    by_category: dict[Category, float] = {}
    by_class: dict[tuple[Category, CostClass], float] = {}
    for fn, dist, cls in zip(stats.functions, own, classes):
        self_s, cost = fn.self_s, cls.cost
        for cat, share in dist.items():
            seconds = self_s * share
            by_category[cat] = by_category.get(cat, 0.0) + seconds
            key = (cat, cost)
            by_class[key] = by_class.get(key, 0.0) + seconds
    return Attribution(by_category, by_class, stats.total_s)
