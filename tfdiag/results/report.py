"""``tfdiag.Report``: one profiled run — its record, its analysis and findings, its formats."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from tfdiag.advise.diagnosis import Diagnosis, diagnose
from tfdiag.advise.finding import Finding
from tfdiag.analysis.pipeline import Analysis
from tfdiag.analysis.probe_figures import ProbeFigures
from tfdiag.analysis.timeline import ProgramTimeline
from tfdiag.records.files import Content, write_set
from tfdiag.records.report import RunRecord, report_paths
from tfdiag.results.base import Result

if TYPE_CHECKING:  # tfdiag.fix imports libcst: loaded by patches() alone, not with a report
    from tfdiag.fix.patch import Proposal


@dataclass(frozen=True, repr=False)
class Report(RunRecord, Result):
    """One profiled run. Build it with :func:`tfdiag.profile` or :func:`tfdiag.load_report`.

    The record's fields (``call``, ``environment``, ``timing``, ``profile``, ...) are raw
    records; ``diagnosis`` (its ``analysis`` and ``findings``) is derived from them once, on
    first use, and every view and document of the report is drawn from it.
    """

    def __repr__(self) -> str:
        """One line; names the findings when they have been computed (never computes them)."""
        median = self.timing.median_s
        timing = f", {median * 1e3:.3g} ms median" if median is not None else ""
        partial = " (partial)" if self.partial else ""
        found = self.__dict__["_diagnosed"][1] if "_diagnosed" in self.__dict__ else None
        ids = "" if found is None else "; " + (", ".join(f.id for f in found) or "no findings")
        return (
            f"<tfdiag.Report {self.call.label}{partial}: {self.timing.iterations} iterations"
            f"{timing}{ids}>"
        )

    @property
    def diagnosis(self) -> Diagnosis:
        """The record, its analysis, its findings, its probes' figures and its timeline,
        computed once (a frozen record's fields never change)."""
        return Diagnosis(self, *self._diagnosed)

    @cached_property
    def _diagnosed(
        self,
    ) -> tuple[Analysis, tuple[Finding, ...], ProbeFigures | None, ProgramTimeline]:
        # Kept as its parts: a Diagnosis kept on the report would hold the report, a cycle
        # that only the cyclic collector frees (a 0.2 s scan at exit after a 100k-function
        # explain).
        d = diagnose(self)
        return d.analysis, d.findings, d.probe_figures, d.timeline

    @property
    def analysis(self) -> Analysis:
        """Classification and attribution, derived from the raw records."""
        return self.diagnosis.analysis

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The findings, highest impact first."""
        return self.diagnosis.findings

    def patches(self) -> tuple[Proposal, ...]:
        """Each finding's patch to the user's file that made the call (its line and the
        lines below it in the same folder), or why none is mechanical: proposals, not
        measured (``tfdiag fix`` runs the program to verify them)."""
        from tfdiag.fix.propose import propose

        if not self.call.file:
            return ()
        return propose(self.findings, self.call.file)

    @classmethod
    def of(cls, record: RunRecord) -> Report:
        """The public report of a bare record."""
        if isinstance(record, Report):
            return record
        return cls(**{f: getattr(record, f) for f in record.__dataclass_fields__})

    # -- files -----------------------------------------------------------------------

    def plot_timeline(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write a PNG of the iteration times, warm-up, spikes and drift marked.

        Needs matplotlib (``pip install matplotlib``); raises InputError without it.
        """
        from tfdiag.records.errors import InputError
        from tfdiag.render.formats import Options, format_named

        p = Path(path)
        if p.suffix.lower() != ".png":
            raise InputError(f"{p}: the timeline plot is a PNG; give a path ending in .png")
        data = format_named(self.kind, "png").write(self, Options())
        assert isinstance(data, bytes)
        write_set({p: data}, overwrite=overwrite)
        return p

    def save(self, path: str | Path, *, overwrite: bool = False) -> tuple[Path, ...]:
        """Write ``<stem>.tfdiag.json`` and ``<stem>.prof`` (for snakeviz) as one set.

        With probes, the same set holds the TF profiler's logdir ``<stem>.tfprofile/``
        and the sampling files ``<stem>.pyisession``, ``.sampling.html`` and
        ``.speedscope.json`` (see :mod:`tfdiag.render.artefacts`). A path ending in another
        format's suffix (``.html``: the self-contained page; ``.prof``, ``.png``, ...) writes
        that format alone. Everything goes through a temporary file (or folder) and a rename; an
        existing file is not replaced unless ``overwrite``. Returns every path written: the
        report's JSON first, then its ``.prof``, then the probe files.
        """
        return self._write(path, overwrite=overwrite)

    def _default_files(self, path: Path) -> dict[Path, Content]:
        from tfdiag.records.manifest import describe
        from tfdiag.render.artefacts import artefact_files
        from tfdiag.render.formats import document

        json_path, prof_path = report_paths(path)
        companions: dict[Path, Content] = {prof_path: self.profile.to_prof_bytes()}
        companions.update(artefact_files(self, json_path))
        doc = document(self)
        # The JSON is switched last; it names the companions saved with it (size, hash).
        doc["files"] = {p.name: describe(data) for p, data in companions.items()}
        text = json.dumps(doc, separators=(",", ":"), allow_nan=False)
        return {json_path: text.encode("utf-8"), **companions}
