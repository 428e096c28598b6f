"""The second breakdown: sampled call stacks → culprit categories, without overlap.

Each sample's time goes to the nearest culprit on its stack, found from the leaf
upward with the same catalog and the same rules as the cProfile attribution
(:mod:`tfdiag.analysis.attribute`): a strong rule names the category; a weak leaf (an
eager op dispatch) takes the category of the culprit above it when there is one;
the user's own code keeps its time; wrapper frames are looked through. Unlike
cProfile's one caller level, a sample has its whole stack, so nothing is estimated.

Pure functions over a :class:`~tfdiag.records.probes.SamplingRecord`.
"""

from __future__ import annotations

from collections.abc import Sequence

from tfdiag.records.catalog import Catalog, Category, Rule, default_catalog
from tfdiag.records.paths import is_user_code
from tfdiag.records.probes import SamplingRecord
from tfdiag.records.report import RunRecord


def _strong(rule: Rule | None) -> bool:
    return rule is not None and rule.category is not Category.WRAPPER and not rule.weak


def stack_category(
    frames: Sequence[tuple[str, int, str]], rules: Sequence[Rule | None]
) -> Category:
    """Where one sample's time goes. ``frames`` root → leaf, ``rules`` matched per frame."""
    if not frames:
        return Category.OTHER
    leaf = len(frames) - 1
    rule = rules[leaf]
    if _strong(rule):
        assert rule is not None
        return rule.category
    if rule is not None and rule.weak:
        for above in range(leaf - 1, -1, -1):
            r = rules[above]
            if r is not None and r.category is Category.WRAPPER:
                continue
            return r.category if _strong(r) and r is not None else rule.category
        return rule.category
    if rule is None and is_user_code(frames[leaf][0]):
        return Category.USER_CODE
    for above in range(leaf - 1, -1, -1):
        r = rules[above]
        if _strong(r) and r is not None:
            return r.category
        if r is None and is_user_code(frames[above][0]):
            return Category.OTHER
    return Category.OTHER


def sampled_breakdown(record: SamplingRecord, catalog: Catalog) -> dict[Category, float]:
    """Seconds per category over every sample inside the call; sums to ``sampled_s``."""
    rules = [catalog.match(file, name) for file, _, name in record.frames]
    out: dict[Category, float] = {}
    for stack in record.stacks:
        cat = stack_category(
            [record.frames[i] for i in stack.frames], [rules[i] for i in stack.frames]
        )
        out[cat] = out.get(cat, 0.0) + stack.seconds
    return out


def sampled_shares(report: RunRecord) -> dict[Category, float] | None:
    """The sampling probe's breakdown as shares of sampled time (the report's rules first)."""
    record = report.probes.sampling if report.probes is not None else None
    if record is None or record.sampled_s <= 0:
        return None
    seconds = sampled_breakdown(record, default_catalog().with_rules(report.rules))
    return {c: s / record.sampled_s for c, s in seconds.items()}
