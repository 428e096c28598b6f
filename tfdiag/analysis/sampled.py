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


def _claim_above(rules: Sequence[Rule | None], j: int) -> Category | None:
    """The category of the claiming culprit the frame ``j`` runs under, if any."""
    for k in range(j - 1, -1, -1):
        r = rules[k]
        if _strong(r) and r is not None:
            return r.category if r.claims else None
    return None


def stack_category(
    frames: Sequence[tuple[str, int, str]], rules: Sequence[Rule | None]
) -> Category:
    """Where one sample's time goes, as the cProfile attribution decides it
    (:mod:`tfdiag.analysis.attribute`). ``frames`` root → leaf, ``rules`` matched per frame.

    The leaf's own culprit wins; a weak leaf (an eager op dispatch) takes the category of
    the nearest culprit above it, else keeps its own; the user's own code keeps its time
    unless a claiming culprit (a callback hook, a data adapter) runs it; anything else goes
    to the nearest culprit above, stopping at the user's code. Wrappers are looked through.
    """
    if not frames:
        return Category.OTHER
    leaf = len(frames) - 1
    rule = rules[leaf]
    if _strong(rule):
        assert rule is not None and rule.category is not None  # matched: categorizing
        return rule.category
    if rule is None and is_user_code(frames[leaf][0]):
        return _claim_above(rules, leaf) or Category.USER_CODE
    context = Category.OTHER
    for above in range(leaf - 1, -1, -1):
        r = rules[above]
        if _strong(r) and r is not None and r.category is not None:
            context = r.category
            break
        if r is None and is_user_code(frames[above][0]):
            context = _claim_above(rules, above) or Category.OTHER
            break
    if (
        rule is not None
        and rule.weak
        and rule.category is not None
        and context in (Category.OTHER, Category.TENSOR_CONVERSION)
    ):
        return rule.category
    return context


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
