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
from tfdiag.advise.finding import CallKind, Context, Finding, FindingSpec
from tfdiag.advise.jit import recompiled, script_recompiles
from tfdiag.advise.remedies import Scene, evidence, remedy
from tfdiag.advise.table import FINDINGS
from tfdiag.analysis.lines import UserLine, script_lines
from tfdiag.records.catalog.backends import JAX
from tfdiag.records.paths import is_user_code
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
#: A jitted function of the script's compiled again at least this many times after its
#: first compile is recompiling (not warming up a few shapes)...
MIN_RECOMPILES = 4
#: ... and the finding's family by JAX's cause (the rest, a function jitted anew included:
#: per-iteration-tracing, whose JAX text says to jit it once, outside the loop).
_COMPILE_FAMILIES = {"shape": "xla-compile-per-shape"}


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
        # a line whose API's nature has a remedy (a summary written, a checkpoint saved on
        # every step) is one from MIN_SHARE, as a family's; any other from MIN_COSTLY_SHARE
        floor = MIN_SHARE if cure is not None else MIN_COSTLY_SHARE
        if line.share < floor:
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


def _jit_line(name: str, lines: tuple[UserLine, ...]) -> UserLine | None:
    """The user's line that calls the jitted function ``name``: of the lines that call a
    jitted function, inside a loop, the one whose text calls ``name(``, else the only one."""
    calls = [u for u in lines if u.nature == "graph-call" and u.repeated and not u.entry]
    named = [u for u in calls if f"{name}(" in u.code]
    found = named or (calls if len(calls) == 1 else [])
    return max(found, key=lambda u: u.share) if found else None


def compile_findings(
    result: ScriptRecord, lines: tuple[UserLine, ...], scene: Scene
) -> list[Finding]:
    """A ``jax.jit`` function of the user's, called outside every Keras call site,
    compiled again and again over the script: its recompiles at their share of the
    script's wall time, with JAX's cause and the fix for it. Keras' own jitted steps are
    their call sites' (each site's report has them); a step of the user's may have their
    name (keras.io's JAX loop calls its own ``train_step``)."""
    out = []
    for name, compiles in script_recompiles(result.jit_compiles).items():
        share = sum(c.seconds for c in compiles) / result.wall_s if result.wall_s > 0 else 0.0
        if len(compiles) < MIN_RECOMPILES or share < MIN_SHARE:
            continue
        if not any(c.file and is_user_code(c.file) for c in compiles):
            # a jnp op compiled per new shape, or Keras' own jitted step (its call site's,
            # whose report has it): not a function of the user's
            continue
        cause, d = recompiled(
            name, compiles, min(share, 1.0), "during the script", "of the script's wall time"
        )
        spec = _spec(_COMPILE_FAMILIES.get(cause, "per-iteration-tracing"))
        assert spec is not None
        line = _jit_line(name, lines)
        ev = (evidence(line, "of the script's wall time, inside a loop"),) if line else ()
        backend = JAX.name  # a JAX compilation: JAX's texts, whatever Keras' backend
        key = spec.fix_key_for(d, CallKind.OTHER, backend=backend)
        out.append(
            Finding(
                spec.id,
                spec.title_for(backend),
                spec.severity(d.impact, d.variant),
                round(d.impact, 4),
                (*ev, *d.evidence),
                spec.fix_for(d, CallKind.OTHER, backend=backend),
                line=line,
                remedy=f"{spec.id}:{key}",
            )
        )
    return out


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
    out.extend(ScriptFinding(c, None, c.impact) for c in compile_findings(result, lines, scene))
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
