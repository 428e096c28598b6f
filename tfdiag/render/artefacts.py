"""The probes' files beside a saved report, all named after its stem.

``run.tfdiag.json`` gets ``run.tfprofile/`` (the TF profiler's logdir, for
TensorBoard's Profile tab and xprof), ``run.pyisession`` (``pyinstrument --load``),
``run.sampling.html`` and ``run.speedscope.json`` (https://www.speedscope.app).
The sampling files are pyinstrument's own renderers over a session built from the
sampled stacks (:func:`session_json`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfdiag.records.clock import epoch_of
from tfdiag.records.files import Content
from tfdiag.records.paths import library_prefix
from tfdiag.records.probes import SamplingRecord
from tfdiag.records.report import RunRecord, report_paths
from tfdiag.render.safe import json_for_script

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
    stem = report_paths(json_path)[1].with_suffix("")
    return ArtefactPaths(
        logdir=stem.with_name(stem.name + LOGDIR_SUFFIX),
        session=stem.with_name(stem.name + ".pyisession"),
        html=stem.with_name(stem.name + ".sampling.html"),
        speedscope=stem.with_name(stem.name + ".speedscope.json"),
    )


def sampling_session(report: RunRecord) -> dict[str, Any] | None:
    """The sampled stacks as a pyinstrument session document, or None without samples."""
    probes = report.probes
    if probes is None or probes.sampling is None or not probes.sampling.stacks:
        return None
    return session_json(
        probes.sampling, f"tfdiag sampling of {report.call.label}", epoch_of(report.created)
    )


def pyinstrument_html(report: RunRecord) -> str:
    """pyinstrument's own HTML page of the sampled stacks, its data embedded as JSON that no
    string in the report can break out of (a function named ``</script>...``)."""
    from pyinstrument.renderers import HTMLRenderer
    from pyinstrument.renderers.html import JSONForHTMLRenderer

    session = _session(report)
    page = str(HTMLRenderer().render(session))
    data = str(JSONForHTMLRenderer().render(session))
    embedded = f"const sessionData = {data};"
    if page.count(embedded) != 1 or page.count(_HEAD) != 1:
        raise RuntimeError("pyinstrument's HTML page has changed shape: cannot embed it safely")
    page = page.replace(embedded, f"const sessionData = {json_for_script(data)};")
    return _REMOTE_CSS.sub('"data:text/css,"', page).replace(_HEAD, _HEAD + _OFFLINE, 1)


#: pyinstrument's script adds a stylesheet link to Google Fonts (Source Code Pro, Source
#: Sans Pro): opening the page would tell fonts.googleapis.com that it was opened (#20.13).
#: The link is pointed at an empty data: stylesheet (the page falls back to local fonts),
#: and a Content-Security-Policy forbids every other request, as the report's own page does.
_REMOTE_CSS = re.compile(r'"https?://fonts\.(?:googleapis|gstatic)\.com/[^"]*"')
_HEAD = '<meta charset="utf-8">'
_OFFLINE = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "script-src 'unsafe-inline'; style-src 'unsafe-inline' data:; img-src data:; "
    'font-src data:">'
)


def speedscope_json(report: RunRecord) -> str:
    """The sampled stacks for https://www.speedscope.app."""
    from pyinstrument.renderers import SpeedscopeRenderer

    return str(SpeedscopeRenderer().render(_session(report)))


def _session(report: RunRecord) -> Any:
    from pyinstrument.session import Session

    doc = sampling_session(report)
    if doc is None:
        raise ValueError("the report holds no sampled stacks")
    return Session.from_json(doc)


def artefact_files(report: RunRecord, json_path: Path) -> dict[Path, Content]:
    """The probe files to write beside ``json_path`` (none for a report without probes)."""
    probes = report.probes
    if probes is None:
        return {}
    paths = artefact_paths(json_path)
    out: dict[Path, Content] = {}
    if probes.trace_files:
        out[paths.logdir] = dict(probes.trace_files)
    doc = sampling_session(report)
    if doc is not None:
        out[paths.session] = json.dumps(doc).encode("utf-8")
        out[paths.html] = pyinstrument_html(report).encode("utf-8")
        out[paths.speedscope] = speedscope_json(report).encode("utf-8")
    return out


def session_json(
    record: SamplingRecord, description: str, start_time: float = 0.0
) -> dict[str, Any]:
    """The samples as a pyinstrument ``Session`` JSON (``.pyisession``), one record per stack.

    Stacks are aggregated (identical stacks merged), so the session is for the
    call-tree views (HTML, speedscope's left-heavy view), not for a timeline.
    """
    root = "MainThread\x00<thread>\x000"
    ids = [f"{name}\x00{file}\x00{line}" for file, line, name in record.frames]
    prefixes = sorted({p for file, _, _ in record.frames if (p := library_prefix(file))})
    # pyinstrument names a file by its path relative to the nearest sys_path entry and
    # groups hidden library frames by that name's first part ("keras", "tensorflow"):
    # the library prefixes, then the folders of the user's own files.
    own = sorted({_folder(file) for file, _, _ in record.frames if not library_prefix(file)} - {""})
    return {
        "start_time": start_time,
        "duration": record.sampled_s + record.outside_s,
        "min_interval": record.interval_s,
        "max_interval": record.interval_s,
        "sample_count": record.samples,
        "start_call_stack": [root],
        "target_description": description,
        "cpu_time": record.cpu_s or 0.0,
        "sys_path": [*sorted(prefixes, key=len, reverse=True), *own],
        "sys_prefixes": prefixes,
        "frame_records": [
            [[root, *(ids[i] for i in stack.frames)], stack.seconds] for stack in record.stacks
        ],
    }


def _folder(file: str) -> str:
    """The folder of a frame's file (``""`` for ``<string>`` and other non-paths)."""
    if "/" not in file.replace("\\", "/") or file.startswith("<"):
        return ""
    return file.replace("\\", "/").rsplit("/", 1)[0] + "/"
