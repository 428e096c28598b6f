"""The probes' files beside a saved report, all named after its stem.

``run.tfdiag.json`` gets ``run.tfprofile/`` (the TF profiler's logdir, for
TensorBoard's Profile tab and xprof), ``run.pyisession`` (``pyinstrument --load``),
``run.sampling.html`` and ``run.speedscope.json`` (https://www.speedscope.app).
:meth:`Report.save` writes them in one set with the report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tfdiag._atomic import Content
from tfdiag.sampled import session_json

if TYPE_CHECKING:
    from tfdiag.report import Report

#: TensorBoard finds a profile under ``<logdir>/plugins/profile/<run>/``.
LOGDIR_SUFFIX = ".tfprofile"


@dataclass(frozen=True)
class ArtefactPaths:
    logdir: Path
    session: Path
    html: Path
    speedscope: Path


def artefact_paths(json_path: Path) -> ArtefactPaths:
    """Where the probe files of the report at ``json_path`` go (same folder, same stem)."""
    from tfdiag.report import report_paths

    stem = report_paths(json_path)[1].with_suffix("")
    return ArtefactPaths(
        logdir=stem.with_name(stem.name + LOGDIR_SUFFIX),
        session=stem.with_name(stem.name + ".pyisession"),
        html=stem.with_name(stem.name + ".sampling.html"),
        speedscope=stem.with_name(stem.name + ".speedscope.json"),
    )


def artefact_files(report: Report, json_path: Path) -> dict[Path, Content]:
    """The probe files to write beside ``json_path`` (none for a report without probes)."""
    probes = report.probes
    if probes is None:
        return {}
    paths = artefact_paths(json_path)
    out: dict[Path, Content] = {}
    if probes.trace_files:
        out[paths.logdir] = dict(probes.trace_files)
    if probes.sampling is not None and probes.sampling.stacks:
        from pyinstrument.renderers import HTMLRenderer, SpeedscopeRenderer
        from pyinstrument.session import Session

        doc = session_json(
            probes.sampling, f"tfdiag sampling of {report.call.label}", _epoch(report.created)
        )
        session = Session.from_json(doc)
        out[paths.session] = json.dumps(doc).encode("utf-8")
        out[paths.html] = HTMLRenderer().render(session).encode("utf-8")
        out[paths.speedscope] = SpeedscopeRenderer().render(session).encode("utf-8")
    return out


def _epoch(created: str) -> float:
    try:
        return datetime.fromisoformat(created).timestamp()
    except ValueError:
        return 0.0
