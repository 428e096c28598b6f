"""The report: an immutable record of one profiled run, and its JSON form.

The report stores raw records only (what was called, the environment, the
iteration times, the function table, the user's extra rules). Every view —
classification, attribution, findings — is derived on demand by
:mod:`tfdiag.analysis`, so a report saved today is re-analysed with tomorrow's
catalog. The JSON also carries the derived ``summary``, ``categories`` and
``findings`` for other tools to read; :func:`load_report` ignores them.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfdiag._atomic import Content, write_set
from tfdiag._renderable import Renderable
from tfdiag.catalog import Rule
from tfdiag.errors import InputError
from tfdiag.stats import ProfileStats

if TYPE_CHECKING:
    from rich.console import RenderableType

    from tfdiag.analysis import Analysis
    from tfdiag.probe_data import Probes

SCHEMA_VERSION = 1
REPORT_SUFFIX = ".tfdiag.json"


@dataclass(frozen=True)
class CallInfo:
    """What was profiled: ``label`` for display, ``method`` picks the advice."""

    label: str
    target: str = ""
    method: str = ""
    flavour: str = "unknown"
    args: tuple[str, ...] = ()
    kwargs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Environment:
    python: str = ""
    platform: str = ""
    tensorflow: str | None = None
    keras: str | None = None
    tf_keras: str | None = None
    cpu_count: int | None = None
    devices: tuple[str, ...] = ()

    def stack(self) -> list[str]:
        """``["TensorFlow 2.21.0", "Keras 3.15.1", ...]`` for the packages that are installed."""
        named = (
            ("TensorFlow", self.tensorflow),
            ("Keras", self.keras),
            ("tf_keras", self.tf_keras),
        )
        return [f"{name} {version}" for name, version in named if version]

    def machine(self) -> list[str]:
        """``["2 CPUs", "no GPU"]``: what the run had to compute on."""
        gpus = [d for d in self.devices if d.startswith("GPU")]
        cpus = [f"{self.cpu_count} CPUs"] if self.cpu_count else []
        return [*cpus, f"{len(gpus)} GPU" if gpus else "no GPU"]

    @classmethod
    def from_json(cls, env: dict[str, Any]) -> Environment:
        """Read back what ``to_json`` wrote; missing keys take their defaults."""
        return cls(
            python=str(env.get("python", "")),
            platform=str(env.get("platform", "")),
            tensorflow=env.get("tensorflow"),
            keras=env.get("keras"),
            tf_keras=env.get("tf_keras"),
            cpu_count=env.get("cpu_count"),
            devices=tuple(str(d) for d in env.get("devices", ())),
        )


@dataclass(frozen=True)
class Timing:
    """Iteration times. ``iteration_s`` come from a pass with no profiler attached.

    ``profiled_calls`` is how many calls the profile holds (the cold call plus
    ``iterations``); ``first_call_s`` is the cold call, timed under the profiler.
    """

    iterations: int
    profiled_calls: int
    first_call_s: float | None = None
    iteration_s: tuple[float, ...] = ()
    profiled_iteration_s: tuple[float, ...] = ()

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.iteration_s) if self.iteration_s else None

    @property
    def iqr_s(self) -> float | None:
        if len(self.iteration_s) < 2:
            return None
        q = statistics.quantiles(self.iteration_s, n=4, method="inclusive")
        return q[2] - q[0]

    @property
    def profiler_slowdown(self) -> float | None:
        """Median profiled iteration / median unprofiled iteration (cProfile's cost)."""
        if not self.iteration_s or not self.profiled_iteration_s:
            return None
        base = statistics.median(self.iteration_s)
        return statistics.median(self.profiled_iteration_s) / base if base > 0 else None


@dataclass(frozen=True, repr=False)
class Report(Renderable):
    """One profiled run. Build it with :func:`tfdiag.profile` or :func:`load_report`."""

    call: CallInfo
    environment: Environment
    timing: Timing
    profile: ProfileStats
    #: The table as it stood after the cold call alone (``None`` for a bare .prof).
    cold_profile: ProfileStats | None = None
    rules: tuple[Rule, ...] = ()
    notes: tuple[str, ...] = ()
    created: str = ""
    source: str = "profile"
    partial: bool = False
    schema_version: int = field(default=SCHEMA_VERSION)
    #: The sampling and TF profiler probes' records (``None`` when neither ran).
    probes: Probes | None = None

    def __repr__(self) -> str:
        median = self.timing.median_s
        timing = f", {median * 1e3:.3g} ms median" if median is not None else ""
        ids = ", ".join(f.id for f in self.findings) or "no findings"
        partial = " (partial)" if self.partial else ""
        return (
            f"<tfdiag.Report {self.call.label}{partial}: {self.timing.iterations} iterations"
            f"{timing}; {ids}>"
        )

    @cached_property
    def analysis(self) -> Analysis:
        """Classification, attribution and findings, derived from the raw records."""
        from tfdiag.analysis import analyze

        return analyze(self)

    @property
    def findings(self) -> tuple[Any, ...]:
        return self.analysis.findings

    # -- output --------------------------------------------------------------------

    def _render(self) -> RenderableType:
        from tfdiag.render.console import render_report

        return render_report(self)

    def plot_timeline(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write a PNG of the iteration times, warm-up, spikes and drift marked.

        Needs matplotlib (``pip install 'tfdiag[plot]'``); raises InputError without it.
        """
        from tfdiag.render.plot import plot_timeline

        return plot_timeline(self, path, overwrite=overwrite)

    def to_json(self) -> dict[str, Any]:
        from tfdiag.render.json import report_to_json

        return report_to_json(self)

    def save(self, path: str | Path, *, overwrite: bool = False) -> tuple[Path, Path]:
        """Write ``<stem>.tfdiag.json`` and ``<stem>.prof`` (for snakeviz) as one set.

        With probes, the same set holds the TF profiler's logdir ``<stem>.tfprofile/``
        and the sampling files ``<stem>.pyisession``, ``.sampling.html`` and
        ``.speedscope.json`` (see :mod:`tfdiag.artefacts`). Everything goes through a
        temporary file (or folder) and a rename; an existing file is not replaced
        unless ``overwrite``. Returns the report's two paths.
        """
        from tfdiag.artefacts import artefact_files

        json_path, prof_path = report_paths(path)
        text = json.dumps(self.to_json(), separators=(",", ":"), allow_nan=False)
        files: dict[Path, Content] = {
            json_path: text.encode("utf-8"),
            prof_path: self.profile.to_prof_bytes(),
        }
        files.update(artefact_files(self, json_path))
        write_set(files, overwrite=overwrite)
        return json_path, prof_path


def report_paths(path: str | Path) -> tuple[Path, Path]:
    """``x.tfdiag.json`` / ``x.json`` / ``x`` → (``x.tfdiag.json``, ``x.prof``)."""
    p = Path(path)
    name = p.name
    for suffix in (REPORT_SUFFIX, ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            stem = name[: -len(suffix)]
            json_name = name
            break
    else:
        stem, json_name = name, name + REPORT_SUFFIX
    if not stem:
        raise InputError(f"{path}: not a usable report file name")
    return p.with_name(json_name), p.with_name(stem + ".prof")
