"""The result of ``tfdiag run``: Keras calls per call site, and its JSON (kind ``script``)."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfdiag import __version__
from tfdiag._atomic import write_set
from tfdiag._renderable import Renderable
from tfdiag.errors import InputError
from tfdiag.report import SCHEMA_VERSION, Environment, Report

if TYPE_CHECKING:
    from rich.console import RenderableType

#: A site at least this share of the script's wall time is "costly": its findings are shown.
COSTLY_SHARE = 0.05
#: At most this many costly sites keep their profile.
MAX_COSTLY_SITES = 5


@dataclass(frozen=True)
class CallSite:
    """One line of the user's code that called a Keras method, and what those calls cost.

    ``call_s`` are the first calls' times in order (the first ``profiled_calls`` of
    them ran under cProfile); ``report`` is the profile of those calls, kept for
    costly sites only.
    """

    file: str
    line: int
    method: str
    owner: str = ""
    flavour: str = "unknown"
    code: str = ""
    calls: int = 0
    total_s: float = 0.0
    errors: int = 0
    profiled_calls: int = 0
    call_s: tuple[float, ...] = ()
    report: Report | None = None

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def label(self) -> str:
        return f"{self.owner}.{self.method}" if self.owner else self.method

    @property
    def per_call_s(self) -> float:
        return self.total_s / self.calls if self.calls else 0.0

    @property
    def unprofiled_median_s(self) -> float | None:
        """Median time of the calls that ran with no profiler attached, if any."""
        rest = self.call_s[self.profiled_calls :]
        return statistics.median(rest) if rest else None


@dataclass(frozen=True)
class ScriptResult(Renderable):
    """One run of a user's script under ``tfdiag run``; sites by total time, largest first."""

    script: str
    argv: tuple[str, ...]
    wall_s: float
    status: str
    sites: tuple[CallSite, ...]
    iterations: int
    #: tfdiag's own bookkeeping during the run (stack walks, profile snapshots), which
    #: ``wall_s`` leaves out.
    overhead_s: float = 0.0
    environment: Environment = field(default_factory=Environment)
    notes: tuple[str, ...] = ()
    created: str = ""
    schema_version: int = SCHEMA_VERSION

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def keras_s(self) -> float:
        return sum(s.total_s for s in self.sites)

    def share(self, site: CallSite) -> float:
        """The site's share of the script's wall time."""
        return site.total_s / self.wall_s if self.wall_s > 0 else 0.0

    def costly(self) -> tuple[CallSite, ...]:
        return tuple(s for s in self.sites if s.report is not None)

    # -- output --------------------------------------------------------------------

    def _render(self) -> RenderableType:
        from tfdiag.render.script import render_script

        return render_script(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "kind": "script",
            "tool": f"tfdiag {__version__}",
            "created": self.created,
            "script": self.script,
            "argv": list(self.argv),
            "wall_s": self.wall_s,
            "overhead_s": self.overhead_s,
            "status": self.status,
            "iterations": self.iterations,
            "keras_s": self.keras_s,
            "environment": {**asdict(self.environment), "devices": list(self.environment.devices)},
            "notes": list(self.notes),
            "sites": [_site_json(self, s) for s in self.sites],
        }

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the JSON (what ``tfdiag explain`` reads) atomically; never overwrites
        unless ``overwrite``."""
        p = Path(path)
        text = json.dumps(self.to_json(), separators=(",", ":"), allow_nan=False)
        write_set({p: text.encode("utf-8")}, overwrite=overwrite)
        return p


def _site_json(result: ScriptResult, s: CallSite) -> dict[str, Any]:
    return {
        "file": s.file,
        "line": s.line,
        "location": s.location,
        "method": s.method,
        "owner": s.owner,
        "flavour": s.flavour,
        "code": s.code,
        "calls": s.calls,
        "errors": s.errors,
        "total_s": s.total_s,
        "share": result.share(s),
        "per_call_s": s.per_call_s,
        "unprofiled_median_s": s.unprofiled_median_s,
        "profiled_calls": s.profiled_calls,
        "call_s": list(s.call_s),
        "findings": [f.id for f in s.report.findings] if s.report else [],
        "report": s.report.to_json() if s.report else None,
    }


def _environment(doc: Any) -> Environment:
    if not isinstance(doc, dict):
        return Environment()
    cpu = doc.get("cpu_count")
    return Environment(
        python=str(doc.get("python", "")),
        platform=str(doc.get("platform", "")),
        tensorflow=doc.get("tensorflow"),
        keras=doc.get("keras"),
        tf_keras=doc.get("tf_keras"),
        cpu_count=int(cpu) if cpu is not None else None,
        devices=tuple(str(d) for d in doc.get("devices", ())),
    )


def result_from_json(doc: dict[str, Any]) -> ScriptResult:
    """Rebuild a ScriptResult (``load_result`` calls this for ``"kind": "script"``)."""
    from tfdiag.load import report_from_json

    sites = []
    for s in doc["sites"]:
        report = s.get("report")
        sites.append(
            CallSite(
                file=str(s["file"]),
                line=int(s["line"]),
                method=str(s["method"]),
                owner=str(s.get("owner", "")),
                flavour=str(s.get("flavour", "unknown")),
                code=str(s.get("code", "")),
                calls=int(s["calls"]),
                total_s=float(s["total_s"]),
                errors=int(s.get("errors", 0)),
                profiled_calls=int(s.get("profiled_calls", 0)),
                call_s=tuple(float(t) for t in s.get("call_s", ())),
                report=report_from_json(report) if report is not None else None,
            )
        )
    wall = float(doc["wall_s"])
    if wall < 0:
        raise InputError("not a valid script result (wall_s < 0)")
    return ScriptResult(
        script=str(doc["script"]),
        argv=tuple(str(a) for a in doc.get("argv", ())),
        wall_s=wall,
        status=str(doc.get("status", "ok")),
        sites=tuple(sites),
        iterations=int(doc.get("iterations", 0)),
        overhead_s=float(doc.get("overhead_s", 0.0)),
        environment=_environment(doc.get("environment")),
        notes=tuple(str(n) for n in doc.get("notes", ())),
        created=str(doc.get("created", "")),
    )
