"""The record of ``tfdiag run``: Keras calls per call site (kind ``script``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from tfdiag.records.fields import Obj
from tfdiag.records.jit import JitCompile
from tfdiag.records.lines import LinesRecord
from tfdiag.records.numbers import median
from tfdiag.records.patches import FixRecord
from tfdiag.records.report import SCHEMA_VERSION, Environment, RunRecord

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
    report: RunRecord | None = None

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
        return median(rest)


@dataclass(frozen=True)
class ScriptRecord:
    """One run of a user's script under ``tfdiag run``; sites by total time, largest first
    (:class:`tfdiag.script.ScriptResult` adds the output formats)."""

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
    #: The user's lines the whole script spent its time at (None: not recorded).
    lines: LinesRecord | None = None
    #: Every JAX compilation during the script (a ``jax.jit`` step of the user's is no
    #: Keras call site: its recompiles are read from these), ``call`` 0 for all.
    jit_compiles: tuple[JitCompile, ...] = ()
    created: str = ""
    schema_version: int = SCHEMA_VERSION
    #: What ``tfdiag fix`` proposed and measured for each finding (None: no fix ran).
    fix: FixRecord | None = None

    kind: ClassVar[str] = "script"

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


S = TypeVar("S", bound=ScriptRecord)


def script_from_json(
    doc: dict[str, Any], cls: type[S], report: Callable[[dict[str, Any]], RunRecord]
) -> S:
    """Rebuild a record (``cls``: ScriptRecord or a subclass); ``report`` rebuilds the
    costly sites' nested profile reports.

    Raises:
        InputError: a part is missing, of the wrong type or out of range.
    """
    d = Obj(doc, "")
    sites = []
    for i, raw in enumerate(d.items("sites")):
        s = Obj(raw, f"sites[{i}]")
        nested = s.doc.get("report")
        sites.append(
            CallSite(
                file=s.text("file"),
                line=s.count("line", hi=10**9),
                method=s.text("method"),
                owner=s.text("owner", ""),
                flavour=s.text("flavour", "unknown"),
                code=s.text("code", ""),
                calls=s.count("calls"),
                total_s=s.seconds("total_s"),
                errors=s.count("errors", 0),
                profiled_calls=s.count("profiled_calls", 0),
                call_s=s.series("call_s"),
                report=report(Obj(nested, s.at("report")).doc) if nested is not None else None,
            )
        )
    return cls(
        script=d.text("script"),
        argv=d.texts("argv"),
        wall_s=d.seconds("wall_s"),
        status=d.text("status", "ok"),
        sites=tuple(sites),
        iterations=d.count("iterations", 0, hi=10**9),
        overhead_s=d.seconds("overhead_s", 0.0),
        environment=Environment.from_json(d.doc.get("environment")),
        notes=d.texts("notes"),
        created=d.text("created", ""),
        lines=LinesRecord.from_json(d.doc.get("lines")),
        jit_compiles=tuple(JitCompile.from_json(row) for row in d.items("jit_compiles")),
        fix=FixRecord.from_json(d.doc.get("fix")),
    )
