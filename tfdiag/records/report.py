"""The record of one profiled run: what was called, where, the times, the function table.

Raw records only (what was called, the environment, the iteration times, the
function table, the user's extra rules). Every view — classification, attribution,
findings — is derived on demand by :mod:`tfdiag.analysis`, so a report saved today
is re-analysed with tomorrow's catalog. Its JSON (:mod:`tfdiag.render.json`) also
carries the derived views for other tools; :func:`run_record_from_json` ignores them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from tfdiag.records.callbacks import PyCallback
from tfdiag.records.catalog import Rule
from tfdiag.records.catalog.backends import BACKENDS, DEFAULT, PACKAGES, Backend
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.distributed import Distribution
from tfdiag.records.errors import InputError
from tfdiag.records.fields import Obj
from tfdiag.records.jit import JitCompile
from tfdiag.records.lines import LinesRecord
from tfdiag.records.machine import MachineLoad, NativeLog
from tfdiag.records.numbers import iqr, median
from tfdiag.records.probes import Probes
from tfdiag.records.stats import ProfileStats
from tfdiag.records.traces import TraceEvent
from tfdiag.records.verification import Verification

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
    #: What tfdiag read off the call's objects when it ran: ``("run_eagerly", "True")``,
    #: ``("steps_per_execution", "1")``, ``("x.workers", "1")``... (the advice reads them).
    facts: tuple[tuple[str, str], ...] = ()
    #: The line of the user's code that made the call (``tfdiag.profile(...)``'s caller, the
    #: ``fit`` a callback ran in, a ``tfdiag run`` call site): file, line, source text.
    file: str = ""
    line: int = 0
    code: str = ""

    def fact(self, name: str) -> str | None:
        return dict(self.facts).get(name)


@dataclass(frozen=True)
class Environment:
    python: str = ""
    platform: str = ""
    cpu_count: int | None = None
    devices: tuple[str, ...] = ()
    #: Keras 3's backend (``keras.backend.backend()``: ``tensorflow``, ``jax``, ``torch``),
    #: None when Keras 3 was not imported or the report predates the field.
    backend: str | None = None
    #: The version of each package of :data:`~tfdiag.records.catalog.backends.PACKAGES` the
    #: process had imported, by its key (``{"tensorflow": "2.21.0", "keras": "3.15.1"}``).
    versions: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        known = {p.key for p in PACKAGES}
        odd = sorted(set(self.versions) - known)
        if odd:
            raise ValueError(f"unknown package {odd[0]!r} (one of: {', '.join(sorted(known))})")
        kept = {p.key: v for p in PACKAGES if (v := self.versions.get(p.key)) is not None}
        object.__setattr__(self, "versions", kept)

    def version(self, key: str) -> str | None:
        """The version of the package ``key`` the run used (None: not loaded, not said)."""
        return self.versions.get(key)

    def stack(self) -> list[str]:
        """``["TensorFlow 2.21.0", "Keras 3.15.1", ...]`` for the packages the run used."""
        return [f"{p.label} {v}" for p in PACKAGES if (v := self.versions.get(p.key))]

    @property
    def framework(self) -> str | None:
        """What the run computed with: Keras 3's backend when it recorded one, else the
        default backend (``tensorflow``) when its package was loaded, else the first
        backend whose package was (``jax`` for a JAX program without Keras or TensorFlow),
        None when the report does not say (a bare .prof, an older report)."""
        if self.backend:
            return self.backend
        if self._loaded(DEFAULT):
            return DEFAULT.name
        return next((b.name for b in BACKENDS if self._loaded(b)), None)

    def _loaded(self, backend: Backend) -> bool:
        """Whether the backend's own package (its first) was loaded."""
        return bool(backend.versions) and bool(self.versions.get(backend.versions[0].key))

    def machine(self) -> list[str]:
        """``["2 CPUs", "no GPU"]``: what the run had to compute on."""
        gpus = [d for d in self.devices if d.startswith("GPU")]
        cpus = [f"{self.cpu_count} CPUs"] if self.cpu_count else []
        return [*cpus, f"{len(gpus)} GPU" if gpus else "no GPU"]

    def to_json(self) -> dict[str, Any]:
        """The JSON layout reports have always had: the first layout's packages before the
        machine, the others after ``backend`` (each package's key; null when not loaded)."""
        out: dict[str, Any] = {"python": self.python, "platform": self.platform}
        out.update({p.key: self.version(p.key) for p in PACKAGES if p.first_layout})
        out.update(cpu_count=self.cpu_count, devices=list(self.devices), backend=self.backend)
        out.update({p.key: self.version(p.key) for p in PACKAGES if not p.first_layout})
        return out

    @classmethod
    def from_json(cls, env: Any) -> Environment:
        """Read back what ``to_json`` wrote; missing keys take their defaults.

        Raises:
            InputError: a field of the wrong type.
        """
        if env is None:
            return cls()
        e = Obj(env, "environment")
        versions = {p.key: v for p in PACKAGES if (v := e.opt_text(p.key)) is not None}
        return cls(
            python=e.text("python", ""),
            platform=e.text("platform", ""),
            cpu_count=e.opt_count("cpu_count", hi=1 << 20),
            devices=e.texts("devices"),
            backend=e.opt_text("backend"),
            versions=versions,
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
    #: How many of the first ``iteration_s`` the TF profiler traced (0: none, or it ran a
    #: pass of its own, as in reports before the probes shared the timed pass).
    traced: int = 0

    @property
    def plain_s(self) -> tuple[float, ...]:
        """The timed iterations no tracer slowed: after the traced block, when there are any."""
        rest = self.iteration_s[self.traced :]
        return rest if rest else self.iteration_s

    @property
    def median_s(self) -> float | None:
        return median(self.plain_s)

    @property
    def iqr_s(self) -> float | None:
        return iqr(self.plain_s)

    @property
    def profiler_slowdown(self) -> float | None:
        """Median profiled iteration / median unprofiled iteration (cProfile's cost)."""
        base, profiled = median(self.plain_s), median(self.profiled_iteration_s)
        if base is None or profiled is None:
            return None
        return profiled / base if base > 0 else None


@dataclass(frozen=True)
class RunRecord:
    """What one profiled run recorded: raw records only, nothing derived.

    :class:`tfdiag.Report` is this record with its analysis and its output formats;
    everything below the results layer reads a ``RunRecord``.
    """

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
    #: The user's own findings, run after the built-in ones (saved, so explain re-runs them).
    finding_rules: tuple[FindingRule, ...] = ()
    #: The graph traces of the profiled pass, in order (empty: none, or not recorded).
    traces: tuple[TraceEvent, ...] = ()
    #: Python that TensorFlow called back from its threads during the timed pass.
    py_callbacks: tuple[PyCallback, ...] = ()
    #: The ``jax.jit`` compilations of the profiled pass, in order (empty: none, or not JAX).
    jit_compiles: tuple[JitCompile, ...] = ()
    #: The worker's place in a ``tf.distribute`` job (``None``: no strategy, or not recorded).
    distribution: Distribution | None = None
    #: ``profile(..., verify=True)``: each finding's fixes measured against the call as
    #: written (empty: not verified). Raw records; the verdicts are derived.
    verifications: tuple[Verification, ...] = ()
    #: The machine's load while the iterations were timed (``None``: not measured).
    machine: MachineLoad | None = None
    #: Native log lines TensorFlow/xprof wrote during tfdiag's own work (kept off stderr).
    native_log: NativeLog = field(default_factory=NativeLog)
    #: The user's lines the steady-state calls ran, and what they called (None: not
    #: recorded, as in a bare .prof or an older report).
    lines: LinesRecord | None = None

    kind: ClassVar[str] = "profile"

    def verification_of(self, finding: str) -> Verification | None:
        return next((v for v in self.verifications if v.finding == finding), None)


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
