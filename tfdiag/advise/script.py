"""A ``tfdiag run`` script's findings, ranked across the script: each costly call site's
findings, weighed by the site's share of the script, and the findings of the script's own
lines outside every call site (a layer built in a loop, weights copied through NumPy
between two calls), each at its share of the script's wall time.

A script line is a finding only when it ran inside a loop (the script sampler's
``repeated``): a line run once (an import, a model built before the loop) is set-up. Its
family is the one its API's nature belongs to, and its fix the remedy of that nature
(:mod:`tfdiag.advise.remedies`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tfdiag.advise.costly import COSTLY_LINE
from tfdiag.advise.diagnosis import diagnosis_of
from tfdiag.advise.finding import Context, Finding, FindingSpec
from tfdiag.advise.remedies import Scene, evidence, remedy
from tfdiag.advise.table import FINDINGS
from tfdiag.analysis.lines import UserLine, script_lines
from tfdiag.records.script import CallSite, ScriptRecord

#: The finding a script line of each nature is, outside the call sites.
BY_NATURE = {
    "construct": "model-rebuilt-per-call",
    "setup": "model-rebuilt-per-call",
    "clear": "model-rebuilt-per-call",
    "data-iterate": "per-call-input-pipeline",
    "eager-op": "eager-execution",
    "train-op": "eager-execution",
    "metric": "eager-execution",
    "weights-host": "eager-execution",
    "to-host": "conversion-overhead",
    "convert": "conversion-overhead",
}
#: Natures whose lines are call sites of their own (their report says what they cost).
SITE_NATURES = frozenset({"keras-loop", "keras-step", "model-call", "graph-call"})
#: A script line of a known nature is a finding from this share of the script's time...
MIN_SHARE = 0.10
#: ... and any other from this share (the no-empty-report rule, script-wide).
MIN_COSTLY_SHARE = 0.25
#: A finding of a site is listed among the script's from this share of the script.
MIN_LISTED = 0.01


#: A site's findings that are shares of its steady state (so of the script, weighed by the
#: site's share); one-time costs and timing patterns stay in the site's own section.
_WEIGHED_TIERS = frozenset({"steady", "conclusion"})


@dataclass(frozen=True)
class ScriptFinding:
    """One finding of the script: ``site`` is the call site whose report it comes from
    (None: a line of the script outside every site); ``share`` is the share of the
    script's wall time its fix removes (the finding's impact × its site's share)."""

    finding: Finding
    site: CallSite | None
    share: float


def _spec(finding_id: str) -> FindingSpec[Context] | None:
    return next((s for s in FINDINGS if s.id == finding_id), None)


def _at_site(line: UserLine, sites: tuple[CallSite, ...]) -> bool:
    """Is the line a call site's (whose file is kept relative to the script's folder)?"""
    path = line.file.replace("\\", "/")
    return any(
        s.line == line.line and (path == s.file or path.endswith("/" + s.file.replace("\\", "/")))
        for s in sites
    )


def _line_finding(line: UserLine, scene: Scene) -> Finding | None:
    family = BY_NATURE.get(line.nature)
    cure = remedy(line, scene)
    if family is None or line.share < MIN_SHARE:
        if line.share < MIN_COSTLY_SHARE:
            return None
        family = COSTLY_LINE
    spec = _spec(family)
    assert spec is not None, family
    text = cure.text if cure is not None else spec.fixes["other"]
    return Finding(
        spec.id,
        spec.title_for(scene.backend),
        spec.severity(line.share),
        round(line.share, 4),
        (evidence(line, "of the script's wall time, inside a loop"),),
        text,
        line=line,
        remedy=cure.key if cure is not None else None,
    )


def script_findings(result: ScriptRecord) -> tuple[ScriptFinding, ...]:
    """Every finding of the script, the largest share of its wall time first, the
    conclusions after the fixes."""
    out: list[ScriptFinding] = []
    for site in result.costly():
        assert site.report is not None
        share = result.share(site)
        for f in diagnosis_of(site.report).findings:
            spec = _spec(f.id)
            if spec is None or spec.tier in _WEIGHED_TIERS:  # the user's own rules: steady
                out.append(ScriptFinding(f, site, round(f.impact * share, 4)))
    lines = script_lines(result.lines)
    scene = Scene(lines, result.environment.framework)
    for line in lines:
        if not line.repeated or line.nature in SITE_NATURES or _at_site(line, result.sites):
            continue
        found = _line_finding(line, scene)
        if found is not None:
            out.append(ScriptFinding(found, None, found.impact))
    return ranked(sf for sf in out if sf.share >= MIN_LISTED)


def ranked(found: Iterable[ScriptFinding]) -> tuple[ScriptFinding, ...]:
    """The script's order: the largest share first, the conclusions after the fixes."""
    # A conclusion (what is left after the fixes: the model's own ops) ranks after every
    # fix, as in a report's own order: its share overlaps theirs (a retrace's time is op
    # time too), and leading with it told a retracing script that Python won't help.
    return tuple(sorted(found, key=lambda sf: (_is_conclusion(sf.finding.id), -sf.share)))


def _is_conclusion(finding_id: str) -> bool:
    spec = _spec(finding_id)
    return spec is not None and spec.tier == "conclusion"
