"""The diagnosis of one run as a value: its record, its analysis, its findings, its probes'
figures and its timeline, computed once (:func:`diagnose`) and handed to every view and
document of the run: they format what it holds and derive nothing."""

from __future__ import annotations

from dataclasses import dataclass

from tfdiag.advise import advise
from tfdiag.advise.finding import Finding
from tfdiag.analysis.pipeline import Analysis, analyze
from tfdiag.analysis.probe_figures import ProbeFigures, probe_figures
from tfdiag.analysis.timeline import ProgramTimeline, program_timeline
from tfdiag.records.report import RunRecord
from tfdiag.records.stats import no_gc


@dataclass(frozen=True)
class Diagnosis:
    """One run's record, the analysis derived from it, the findings drawn from both, its
    probes' figures (None: no probe ran) and what its iteration times say."""

    record: RunRecord
    analysis: Analysis
    findings: tuple[Finding, ...]
    probe_figures: ProbeFigures | None
    timeline: ProgramTimeline


def diagnose(record: RunRecord) -> Diagnosis:
    """Analyse ``record``, read its timeline and run the finding table on both, once (the
    cyclic collector paused meanwhile: the analysis builds a few values per function, none
    of them cyclic)."""
    with no_gc():
        analysis = analyze(record)
        timeline = program_timeline(record)
        findings = advise(record, analysis, timeline=timeline)
        return Diagnosis(record, analysis, findings, probe_figures(record, analysis), timeline)


def diagnosis_of(record: RunRecord) -> Diagnosis:
    """The diagnosis a report keeps (``tfdiag.Report.diagnosis``, computed once per
    report), or, for a bare record, one computed now."""
    kept = getattr(record, "diagnosis", None)
    return kept if isinstance(kept, Diagnosis) else diagnose(record)
