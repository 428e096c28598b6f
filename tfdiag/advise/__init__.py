"""Turn the analysis into findings, each with evidence and a concrete fix.

The findings are a table (:data:`~tfdiag.advise.table.FINDINGS`) of data rows, each
with the detector that measures it. Findings come in one order (:data:`ORDER`): by
severity, then fixes before conclusions, one-time costs and timing patterns, then by the
time each fix removes (measured when verified, else the *impact*: the share of
steady-state time the fix can remove). :func:`advise` runs the table on a record and its
analysis; :func:`tfdiag.advise.diagnosis.diagnose` does both once, as one value.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tfdiag.advise.anchors import FAMILY_REMEDIES, anchor
from tfdiag.advise.costly import COSTLY_LINE
from tfdiag.advise.evidence import effective_kind
from tfdiag.advise.finding import (
    TIERS,
    CallKind,
    Context,
    Detection,
    Finding,
    FindingSpec,
    call_kind,
)
from tfdiag.advise.remedies import Scene, remedy
from tfdiag.advise.remedies import evidence as line_evidence
from tfdiag.advise.switches import live_switch, model_switch
from tfdiag.advise.table import FINDINGS
from tfdiag.advise.user import user_finding
from tfdiag.advise.work import NO_FINDING
from tfdiag.analysis.lines import UserLine
from tfdiag.analysis.pipeline import Analysis
from tfdiag.analysis.timeline import ProgramTimeline, program_timeline
from tfdiag.records.catalog.backends import undiagnosed_line
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.errors import InputError
from tfdiag.records.report import RunRecord
from tfdiag.records.verification import Verification

__all__ = [
    "FINDINGS",
    "CallKind",
    "Context",
    "Detection",
    "Finding",
    "FindingSpec",
    "advise",
    "check_finding_rules",
    "undiagnosed",
]


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


#: The one order of every view (console, JSON, HTML; docs/reading-the-report.md says it):
#: severity first — so it never increases down the list —, then, at one severity, fixes to
#: make before the conclusion about what is left (compute-bound), then one-time costs, then
#: what the iteration times show; then the larger measured speed-up (verified findings),
#: then the larger estimated impact.
ORDER = (
    "most important first: by severity, then fixes before conclusions (compute-bound), "
    "one-time costs (build, warm-up) and timing patterns, then by the time each removes"
)
SEVERITIES = ("high", "medium", "low")
_TIER_ORDER = {tier: n for n, tier in enumerate(TIERS)}


def measured_impact(verification: Verification | None) -> float:
    """The share of the call a verified fix removed (1 − 1/speed-up); 0 when not verified."""
    gain = verification.gain if verification is not None else 0.0
    return 1.0 - 1.0 / gain if gain > 1.0 else 0.0


def _order_key(spec: FindingSpec[Any], severity: str, impact: float, gain: float) -> Any:
    return (SEVERITIES.index(severity), _TIER_ORDER[spec.tier], -gain, -impact)


def _without_missing_causes(found: list[_Found]) -> list[_Found]:
    """A finding that is part of one not reported stands alone: its ``<variant>-alone``
    fix, which does not point at the absent finding."""
    ids = {f.spec.id for f in found}
    for f in found:
        d = f.detection
        if d.part_of is not None and d.part_of not in ids:
            alone = f"{d.variant}-alone"
            variant = alone if alone in f.spec.fixes else d.variant
            f.detection = replace(d, part_of=None, variant=variant)
    return found


def _after_their_cause(found: list[_Found]) -> list[_Found]:
    """Each finding that is part of another reported one moved right after it, its severity
    at most its cause's (it is a part of that cost) — and after every finding more severe
    than itself, so severity still never increases down the list."""
    by_id = {f.spec.id: f for f in found}
    parts = [f for f in found if f.detection.part_of in by_id and f.detection.part_of != f.spec.id]
    out = [f for f in found if f not in parts]
    for f in parts:
        cause = by_id[f.detection.part_of or ""]
        if SEVERITIES.index(f.severity) < SEVERITIES.index(cause.severity):
            f.severity = cause.severity
        at = next(n for n, o in enumerate(out) if o is cause)
        out.insert(at + 1, f)
    rank = SEVERITIES.index
    return sorted(out, key=lambda f: rank(f.severity))  # stable: a part stays after its cause


@dataclass
class _Found:
    """A detection on its way to a finding: its row, severity and place in the order."""

    spec: FindingSpec[Context]
    detection: Detection
    impact: float
    ctx: Context
    verification: Verification | None
    severity: str = "low"
    order: int = 0


def undiagnosed(record: RunRecord) -> str | None:
    """The one line that says the record's framework is not diagnosed (None: it is): no
    built-in finding is made there, the user's own rules still run (its row in
    :mod:`tfdiag.records.catalog.backends`)."""
    return undiagnosed_line(record.environment.framework)


def advise(
    record: RunRecord,
    analysis: Analysis,
    table: Sequence[FindingSpec[Context]] = FINDINGS,
    *,
    timeline: ProgramTimeline | None = None,
) -> tuple[Finding, ...]:
    """Run every detector of ``table``, then the record's own finding rules; findings in the
    one order of :data:`ORDER`, each with the fix text for what was called. On a framework
    not diagnosed yet (:func:`undiagnosed`), only the record's own rules. ``timeline``: the
    record's, when the caller has read it already (:func:`~tfdiag.advise.diagnosis.diagnose`)."""
    kind = call_kind(record.call.method)
    if timeline is None:
        timeline = program_timeline(record)
    if undiagnosed(record) is not None:
        table = ()
    table = (*table, *(user_spec(r) for r in record.finding_rules))
    found: list[_Found] = []
    for order, spec in enumerate(table):
        ctx = Context(record, analysis, kind, spec.thresholds, timeline)
        d = spec.detect(ctx)
        if d is None:
            continue
        impact = round(min(max(d.impact, 0.0), 1.0), 4)
        verification = record.verification_of(spec.id)
        severity = spec.severity(max(impact, measured_impact(verification)), d.variant)
        found.append(_Found(spec, d, impact, ctx, verification, severity, order))
    if any(f.spec.id not in (COSTLY_LINE, NO_FINDING) for f in found):
        found = [f for f in found if f.spec.id != COSTLY_LINE]  # a line, when nothing else
    if len(found) > 1:  # where the time went is said only when nothing else is
        found = [f for f in found if f.spec.id != NO_FINDING]
    found.sort(
        key=lambda f: (
            _order_key(
                f.spec, f.severity, f.impact, f.verification.gain if f.verification else 0.0
            ),
            f.order,
        )
    )
    found = _after_their_cause(_without_missing_causes(found))
    out = []
    steady = sum(1 for f in found if f.spec.tier == "steady")
    scene = Scene(analysis.lines, found[0].ctx.backend if found else None)
    for n, f in enumerate(found):
        alone = steady == (1 if f.spec.tier == "steady" else 0)
        d = f.detection
        line = (
            _switch(record, f.spec.id, d.variant)
            or d.line
            or anchor(analysis, f.spec.id, d.culprit)
        )
        cure = remedy(line, scene) if line is not None and _accepts(f.spec.id, line) else None
        if cure is None and line is not None and line.code and not line.entry:
            d = replace(d, values={**_line_values(line), **d.values})
        if cure is not None:
            fix, key = cure.text, cure.key
        else:
            as_kind = effective_kind(f.ctx)
            lead, backend = n == 0, f.ctx.backend
            text = f.spec.fix_key_for(d, as_kind, leads=lead, alone=alone, backend=backend)
            fix = f.spec.fix_for(d, as_kind, leads=lead, alone=alone, backend=backend)
            key = f"{f.spec.id}:{text}"
        evidence = d.evidence
        if line is not None and line.line:
            evidence = (line_evidence(line), *evidence)
        out.append(
            Finding(
                f.spec.id,
                f.spec.title_for(f.ctx.backend),
                f.severity,
                f.impact,
                evidence,
                fix,
                verification=f.verification,
                line=line,
                remedy=key,
            )
        )
    return tuple(out)


def _line_values(line: UserLine) -> dict[str, str]:
    """A line as a fix text's ``{line}``, ``{code}`` and ``{function}``."""
    return {"line": line.location, "code": line.code, "function": line.function}


def _accepts(family: str, line: UserLine) -> bool:
    """Does the remedy of ``line``'s API fix a finding of ``family``? Only where the finding
    explains that kind of work (a compute-bound model is not cured by `predict_on_batch`);
    a debugging switch is put there only for the findings it explains."""
    if family == COSTLY_LINE or line.nature == "debug-switch":
        return True
    return line.nature in FAMILY_REMEDIES.get(family, frozenset())


def _switch(record: RunRecord, family: str, variant: str | None) -> UserLine | None:
    """The debugging switch that causes the finding, when the record shows one on."""
    if variant == "run-eagerly":
        return model_switch(record)
    return live_switch(record, family) or (
        live_switch(record, "eager-execution") if variant == "run-functions-eagerly" else None
    )
