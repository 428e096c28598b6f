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
    Iterative, so deep call chains need no recursion; a cycle is cut where it closes."""
    result: list[Dist | None] = [None] * len(fns)
    in_progress = [False] * len(fns)
    for start in range(len(fns)):
        if result[start] is not None:
            continue
        stack = [start]
        while stack:
            i = stack[-1]
            if result[i] is not None:
                stack.pop()
                continue
            d = direct(i)
            if d is not None or not fns[i].callers:
                result[i] = d if d is not None else _OTHER
                stack.pop()
                continue
            pending = [
                e.caller
                for e in fns[i].callers
                if result[e.caller] is None and not in_progress[e.caller]
            ]
            if pending and not in_progress[i]:
                in_progress[i] = True
                stack.extend(pending)
                continue
            known = [r or _OTHER for e in fns[i].callers if (r := result[e.caller]) is not None]
            if not known:
                result[i] = _OTHER
            elif all(d is known[0] for d in known):  # callers that agree: no weights needed
                result[i] = known[0]
            else:
                weights = edge_weights(fns[i])
                parts = [
                    (w, result[e.caller] or _OTHER)  # a caller still in progress closes a cycle
                    for w, e in zip(weights, fns[i].callers)
                    if result[e.caller] is not None
                ]
                result[i] = _mix(parts)
            in_progress[i] = False
            stack.pop()
    return [r if r is not None else _OTHER for r in result]


def claim_distributions(stats: ProfileStats, rules: Sequence[Rule | None]) -> tuple[Dist, ...]:
    """For each function: how much of its time runs under a *claiming* culprit (a Keras
    callback hook, a Keras data adapter calling the user's ``__getitem__``), by category;
    OTHER is the unclaimed rest. Another culprit in between ends the claim."""

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

    def direct(i: int) -> Dist | None:
        rule = rules[i]
        if _is_strong(rule):
            assert rule is not None and rule.category is not None  # matched: categorizing
            return {rule.category: 1.0}
        if rule is None and is_user_code(fns[i].file):
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
    out: list[Dist] = []
    for i, fn in enumerate(stats.functions):
        rule = rules[i]
        if rule is not None and rule.weak and rule.category is not None:
            # An op run for a culprit is that culprit's; but an op converting an argument is
            # still an op, so a conversion's context does not take it.
            dist = {c: s for c, s in inherited[i].items() if c not in _WEAK_KEEPS}
            rest = 1.0 - sum(dist.values())
            if rest > 1e-12:
                dist[rule.category] = dist.get(rule.category, 0.0) + rest
            out.append(dist)
        elif rule is None and is_user_code(fn.file):
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
        for cat, share in dist.items():
            seconds = fn.self_s * share
            by_category[cat] = by_category.get(cat, 0.0) + seconds
            key = (cat, cls.cost)
            by_class[key] = by_class.get(key, 0.0) + seconds
    return Attribution(by_category, by_class, stats.total_s)
