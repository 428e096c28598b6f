"""The pipeline over recorded data: classify → attribute → advise.

Pure functions of a :class:`~tfdiag.records.report.RunRecord`; no TensorFlow, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from tfdiag.analysis.attribute import (
    Attribution,
    Dist,
    attribute,
    claim_distributions,
    inherited_distributions,
    match_rules,
    own_distributions,
)
from tfdiag.analysis.classify import Classification, CostClass, classify
from tfdiag.analysis.lines import UserLine, user_lines
from tfdiag.analysis.roles import Roles
from tfdiag.records.catalog import Category, Rule, default_catalog
from tfdiag.records.stats import ProfileStats

if TYPE_CHECKING:
    from tfdiag.records.report import RunRecord


@dataclass(frozen=True)
class CulpritRow:
    """A catalogued function, as the seeds reported it: cumulative time over the whole
    profile as a share of runtime − build (rows overlap)."""

    index: int
    name: str
    category: Category
    classification: Classification
    calls: int
    self_s: float
    cum_s: float
    seeds_share: float


@dataclass(frozen=True)
class Analysis:
    """Everything derived from one report."""

    iterations: int
    profiled_calls: int
    rules: tuple[Rule | None, ...]
    classes: tuple[Classification, ...]
    own: tuple[Dist, ...]
    attribution: Attribution
    total_s: float
    build_s: float
    per_iteration_s: float
    mixed_s: float
    culprits: tuple[CulpritRow, ...]
    #: The N iterations after the cold call, function by function (same order as the
    #: profile). Exact when the run kept a cold-call snapshot; otherwise the whole
    #: profile, and steady-state shares fall back to "runtime minus build".
    steady: ProfileStats
    steady_attribution: Attribution
    exact_steady: bool
    #: The functions by role (the catalog's and the user's rules), resolved on first use.
    roles: Roles = field(compare=False, repr=False, kw_only=True)
    #: Your lines: the user's source lines that call the frameworks, costliest first
    #: (:mod:`tfdiag.analysis.lines`); the line that made the call first when known.
    lines: tuple[UserLine, ...] = field(default=(), compare=False, repr=False, kw_only=True)

    def with_role(self, role: str, name: str = "*") -> tuple[int, ...]:
        """The functions (indices into the profile, in table order) holding ``role``
        (:data:`~tfdiag.records.catalog.ROLES`); with ``name``, those whose qualified or
        last name matches that glob."""
        return self.roles.with_role(role, name)

    def has_role(self, i: int, role: str) -> bool:
        """Does function ``i`` hold ``role``?"""
        return self.roles.has_role(i, role)

    @property
    def runtime_minus_build_s(self) -> float:
        """Runtime minus build time: the seeds' denominator."""
        return self.total_s - self.build_s

    @property
    def steady_s(self) -> float:
        """Steady-state time: the N iterations after the cold call (or runtime − build)."""
        return self.steady.total_s if self.exact_steady else self.runtime_minus_build_s

    @property
    def first_call_s(self) -> float | None:
        """Profiled time of the cold call alone, when the run kept its snapshot."""
        return self.total_s - self.steady.total_s if self.exact_steady else None

    def first_call_seconds(self, category: Category) -> float:
        return self.attribution.seconds(category) - self.steady_attribution.seconds(category)

    def steady_calls_per_iteration(self, index: int) -> float:
        """How often function ``index`` ran per steady-state iteration."""
        fn = self.steady.functions[index]
        calls = self.iterations if self.exact_steady else self.profiled_calls
        return fn.primitive_calls / max(calls, 1)

    def class_seconds(self, cost: CostClass) -> float:
        return {
            CostClass.BUILD: self.build_s,
            CostClass.PER_ITERATION: self.per_iteration_s,
            CostClass.MIXED: self.mixed_s,
        }[cost]

    def class_count(self, cost: CostClass) -> int:
        return sum(1 for c in self.classes if c.cost is cost)

    def of_steady(self, seconds: float) -> float:
        """``seconds`` as a share of the steady-state time (0 when it took no time)."""
        return seconds / self.steady_s if self.steady_s > 0 else 0.0

    def steady_share(self, category: Category) -> float:
        """A category's non-overlapping share of the steady-state time."""
        if self.steady_s <= 0:
            return 0.0
        if self.exact_steady:
            seconds = self.steady_attribution.seconds(category)
        else:
            seconds = self.attribution.seconds(category) - self.attribution.seconds(
                category, CostClass.BUILD
            )
        return seconds / self.steady_s


def analyze(report: RunRecord) -> Analysis:
    """Classify and attribute one record."""
    stats = report.profile
    catalog = default_catalog().with_rules(report.rules)
    rules = match_rules(stats, catalog)
    classes = classify(stats, report.timing.iterations)
    claims = claim_distributions(stats, rules)
    inherited = inherited_distributions(stats, rules, claims)
    own = own_distributions(stats, rules, inherited, claims)
    attribution = attribute(stats, rules, classes, own)
    sums = {cost: 0.0 for cost in CostClass}
    for fn, cls in zip(stats.functions, classes):
        sums[cls.cost] += fn.self_s
    total = stats.total_s
    runtime_minus_build = total - sums[CostClass.BUILD]
    if report.cold_profile is not None:
        steady_stats, exact = stats.minus(report.cold_profile), True
    else:
        steady_stats, exact = stats, False
    rows = []
    for i, (fn, rule, cls) in enumerate(zip(stats.functions, rules, classes)):
        if rule is None or rule.category is None:
            continue
        if rule.category in (Category.WRAPPER, Category.OTHER):
            continue
        category: Category = rule.category
        if rule.weak:  # shown under where its time went, e.g. a tf.data op → input pipeline
            category = max(own[i].items(), key=lambda kv: kv[1])[0]
        rows.append(
            CulpritRow(
                index=i,
                name=fn.short_name,
                category=category,
                classification=cls,
                calls=fn.calls,
                self_s=fn.self_s,
                cum_s=fn.cum_s,
                seeds_share=(fn.cum_s / runtime_minus_build if runtime_minus_build > 0 else 0.0),
            )
        )
    rows.sort(key=lambda r: r.cum_s, reverse=True)
    analysis = Analysis(
        iterations=report.timing.iterations,
        profiled_calls=report.timing.profiled_calls,
        rules=rules,
        classes=classes,
        own=own,
        attribution=attribution,
        total_s=total,
        build_s=sums[CostClass.BUILD],
        per_iteration_s=sums[CostClass.PER_ITERATION],
        mixed_s=sums[CostClass.MIXED],
        culprits=tuple(rows),
        steady=steady_stats,
        steady_attribution=attribute(steady_stats, rules, classes, own) if exact else attribution,
        exact_steady=exact,
        roles=Roles(stats, catalog.rules),
    )
    lines = user_lines(report, steady_stats, analysis.iterations, analysis.steady_s)
    return replace(analysis, lines=lines)
