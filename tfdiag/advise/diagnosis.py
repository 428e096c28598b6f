"""The diagnosis of one run as a value: its record, its analysis and its findings, computed
once (:func:`diagnose`) and handed to every view and document of the run."""

from __future__ import annotations

from dataclasses import dataclass

from tfdiag.advise import advise
from tfdiag.advise.finding import Finding
from tfdiag.analysis.pipeline import Analysis, analyze
from tfdiag.records.report import RunRecord
from tfdiag.records.stats import no_gc


@dataclass(frozen=True)
class Diagnosis:
    """One run's record, the analysis derived from it and the findings drawn from both."""

    record: RunRecord
    analysis: Analysis
    findings: tuple[Finding, ...]


def diagnose(record: RunRecord) -> Diagnosis:
    """Analyse ``record`` and run the finding table on it, once (the cyclic collector paused
    meanwhile: the analysis builds a few values per function, none of them cyclic)."""
    with no_gc():
        analysis = analyze(record)
        return Diagnosis(record, analysis, advise(record, analysis))


def diagnosis_of(record: RunRecord) -> Diagnosis:
    """The diagnosis a report keeps (``tfdiag.Report.diagnosis``, computed once per
    report), or, for a bare record, one computed now."""
    kept = getattr(record, "diagnosis", None)
    return kept if isinstance(kept, Diagnosis) else diagnose(record)
