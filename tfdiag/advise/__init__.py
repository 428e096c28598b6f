"""Stage 4: turn the analysis into findings, each with evidence and a concrete fix.

The findings are a table (:data:`~tfdiag.advise.table.FINDINGS`) of data rows, each
with the detector that measures it. Findings are ranked by *impact*: the share of
steady-state (non-build) time the fix can remove. :func:`findings_of` runs the table
on a record once and keeps the result with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from tfdiag.advise.evidence import effective_kind
from tfdiag.advise.finding import (
    CallKind,
    Context,
    Detection,
    Finding,
    FindingSpec,
    call_kind,
)
from tfdiag.advise.table import FINDINGS
from tfdiag.advise.user import user_finding
from tfdiag.advise.work import NO_FINDING
from tfdiag.analysis.pipeline import Analysis, analysis_of
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.errors import InputError
from tfdiag.records.report import RunRecord

__all__ = [
    "FINDINGS",
    "CallKind",
    "Context",
    "Detection",
    "Finding",
    "FindingSpec",
    "advise",
    "check_finding_rules",
    "findings_computed",
    "findings_of",
]

_CACHE = "_tfdiag_findings"


def findings_of(record: RunRecord) -> tuple[Finding, ...]:
    """The record's findings, computed on first use and kept with the record."""
    found = record.__dict__.get(_CACHE)
    if found is None:
        found = record.__dict__[_CACHE] = advise(record, analysis_of(record))
    return found


def check_finding_rules(rules: Iterable[object]) -> tuple[FindingRule, ...]:
    """The user's finding rules, each a :class:`FindingRule` whose id is not a built-in one.

    Raises:
        InputError: anything else.
    """
    out = tuple(rules)
    if not all(isinstance(r, FindingRule) for r in out):
        raise InputError("findings must be tfdiag.FindingRule objects")
    builtin = {spec.id for spec in FINDINGS}
    ids = [r.id for r in out]  # type: ignore[attr-defined]
    for rule_id in ids:
        if rule_id in builtin:
            raise InputError(f"finding rule {rule_id!r} has the id of a built-in finding")
    if len(set(ids)) != len(ids):
        raise InputError("two finding rules have the same id")
    return out  # type: ignore[return-value]


def user_spec(rule: FindingRule) -> FindingSpec[Context]:
    """The table row of a finding the user defined as data."""
    return FindingSpec(
        rule.id,
        rule.title,
        user_finding(rule),
        fixes={"other": rule.fix},
        when=f"`{rule.path}:{rule.function}` takes ≥ {100 * rule.min_share:g} % of steady state",
    )


def findings_computed(record: RunRecord) -> tuple[Finding, ...] | None:
    """The record's findings if :func:`findings_of` already ran on it, else None."""
    found: tuple[Finding, ...] | None = record.__dict__.get(_CACHE)
    return found


#: A steady-state finding must remove at least this share to rank above the conclusion that
#: the model's own ops dominate; below it, it follows that conclusion.
LEAD = 0.15


def _rank(spec: FindingSpec[Any], impact: float) -> tuple[int, float]:
    """Steady-state findings that remove a real share of every iteration come first, then
    the conclusion that the model's ops dominate, then minor steady-state ones, then
    one-time costs (whatever the number of iterations, which only scales those)."""
    if spec.tier == "steady":
        group = 0 if impact >= LEAD else 2
    else:
        group = 1 if spec.tier == "conclusion" else 3
    return group, -impact


def _without_missing_causes(found: list[Any]) -> list[Any]:
    """A finding that is part of one not reported stands alone: its ``<variant>-alone``
    fix, which does not point at the absent finding."""
    ids = {t[2].id for t in found}
    out = []
    for t in found:
        d = t[3]
        if d.part_of is not None and d.part_of not in ids:
            alone = f"{d.variant}-alone"
            d = replace(d, part_of=None, variant=alone if alone in t[2].fixes else d.variant)
            t = (*t[:3], d, *t[4:])
        out.append(t)
    return out


def _after_their_cause(found: list[Any]) -> list[Any]:
    """Each finding that is part of another reported one moved right after it."""
    ids = {t[2].id for t in found}
    parts = [t for t in found if t[3].part_of in ids and t[3].part_of != t[2].id]
    out = [t for t in found if t not in parts]
    for t in parts:
        at = next(n for n, o in enumerate(out) if o[2].id == t[3].part_of)
        out.insert(at + 1, t)
    return out


def advise(
    record: RunRecord, analysis: Analysis, table: Sequence[FindingSpec[Context]] = FINDINGS
) -> tuple[Finding, ...]:
    """Run every detector of ``table``, then the record's own finding rules; findings ranked
    by tier and impact (:func:`_rank`), each with the fix text for what was called."""
    kind = call_kind(record.call.method)
    table = (*table, *(user_spec(r) for r in record.finding_rules))
    found = []
    for order, spec in enumerate(table):
        ctx = Context(record, analysis, kind, spec.thresholds)
        d = spec.detect(ctx)
        if d is None:
            continue
        impact = round(min(max(d.impact, 0.0), 1.0), 4)
        found.append((_rank(spec, impact), order, spec, d, impact, ctx))
    if len(found) > 1:  # where the time went is said only when nothing else is
        found = [t for t in found if t[2].id != NO_FINDING]
    found.sort(key=lambda t: (t[0], t[1]))
    found = _after_their_cause(_without_missing_causes(found))
    out = []
    steady = sum(1 for t in found if t[2].tier == "steady")
    for n, (_, _, spec, d, impact, ctx) in enumerate(found):
        alone = steady == (1 if spec.tier == "steady" else 0)
        fix = spec.fix_for(d, effective_kind(ctx), leads=n == 0, alone=alone)
        verification = record.verification_of(spec.id)
        out.append(
            Finding(
                spec.id,
                spec.title,
                spec.severity(impact),
                impact,
                d.evidence,
                fix,
                verification=verification,
            )
        )
    return tuple(by_measured_gain(out))


def by_measured_gain(found: Sequence[Finding]) -> list[Finding]:
    """Verified findings first, the largest measured speed-up first; the others after them in
    their estimated order (a stable sort: without verifications nothing moves)."""
    return sorted(
        found, key=lambda f: -(f.verification.gain if f.verification is not None else 0.0)
    )
