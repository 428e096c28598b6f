"""The finding types: a row of the findings table, what a detector returns, what a report shows.

A :class:`FindingSpec` is data — id, title, severity bands, thresholds, the fix text
per call kind (or per variant a detector names) — plus the detector function that
measures it on one run. :mod:`tfdiag.advise.table` holds the built-in rows;
docs/catalog.md is generated from them.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from tfdiag.analysis.lines import UserLine
from tfdiag.analysis.pipeline import Analysis
from tfdiag.analysis.timeline import ProgramTimeline
from tfdiag.records.catalog.backends import DEFAULT
from tfdiag.records.report import RunRecord
from tfdiag.records.verification import Verification


class CallKind(str, Enum):
    """What was profiled, as far as the advice is concerned: the fix text is chosen by it."""

    PREDICT = "predict"
    FIT = "fit"
    EVALUATE = "evaluate"
    ON_BATCH = "on-batch"
    LOOP = "custom-loop"
    OTHER = "other"


def call_kind(method: str) -> CallKind:
    """The kind of a profiled call from the method name the record holds."""
    if method in ("predict", "fit", "evaluate"):
        return CallKind(method)
    if method.endswith("_on_batch"):
        return CallKind.ON_BATCH
    return CallKind.OTHER


@dataclass(frozen=True)
class Finding:
    """One diagnosis: ``id`` is stable across versions; ``evidence`` is this run's numbers.

    ``verification``: its fixes measured on the user's call (``profile(..., verify=True)``),
    None when not verified; ``impact`` stays the estimate from the profile.
    """

    id: str
    title: str
    severity: str
    impact: float
    evidence: tuple[str, ...]
    fix: str
    #: Fields beside the text, in JSON (a straggler's ``slow_workers``).
    data: tuple[tuple[str, Any], ...] = ()
    verification: Verification | None = None
    #: The user's line the finding is about (None: none is known), and what wrote its fix:
    #: a remedy rule's key (:mod:`tfdiag.advise.remedies`: ``construct:tf.function``), or
    #: the finding's own text as ``<id>:<key>`` (``per-iteration-tracing:python-value@line``).
    line: UserLine | None = None
    remedy: str | None = None


@dataclass(frozen=True)
class Detection:
    """What a detector measured on one run.

    Attributes:
        impact: the share of the steady state the fix can remove (0–1).
        evidence: this run's numbers, one line each.
        variant: which fix text applies when it is not the call kind's (``"via-data"``).
        values: fills the ``{placeholders}`` of the fix text.
        part_of: the id of the finding whose fix removes this one too (the traces of a
            pipeline built per call are part of ``per-call-input-pipeline``): when that
            finding is reported, this one ranks right after it, whatever its impact.
        culprit: the profile row whose cost the finding is about: the user's line above it
            anchors the finding (:mod:`tfdiag.advise.anchors`).
        line: the user's line itself, when the detector found the finding on it.
    """

    impact: float
    evidence: tuple[str, ...]
    variant: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    part_of: str | None = None
    #: Fields the finding carries in JSON beside its text (``slow_workers``).
    data: tuple[tuple[str, Any], ...] = ()
    culprit: int | None = None
    line: UserLine | None = None


@dataclass(frozen=True)
class Context:
    """What a detector reads: the record, its analysis, the call kind, its own thresholds
    and what the iteration times say (read once per diagnosis)."""

    record: RunRecord
    analysis: Analysis
    kind: CallKind
    thresholds: Mapping[str, float]
    timeline: ProgramTimeline

    def threshold(self, name: str) -> float:
        return self.thresholds[name]

    @property
    def backend(self) -> str | None:
        """The framework the call ran on when it is not TensorFlow (``jax``): the fix texts'
        backend (:meth:`FindingSpec.fix_for`)."""
        framework = self.record.environment.framework
        return framework if framework not in (None, DEFAULT.name) else None


Detector = Callable[[Context], "Detection | None"]


def first_of(*detectors: Detector) -> Detector:
    """One finding measured by several detectors, one per framework's evidence (TF's traces,
    JAX's compilations): the first that finds it."""

    def detect(ctx: Context) -> Detection | None:
        for d in detectors:
            found = d(ctx)
            if found is not None:
                return found
        return None

    detect.__doc__ = detectors[0].__doc__
    detect.__name__ = detectors[0].__name__
    return detect


#: What a detector reads: a :class:`Context` (one run) or a job's (:mod:`tfdiag.advise.job`).
C = TypeVar("C")


@dataclass(frozen=True)
class FindingSpec(Generic[C]):
    """One row of a findings table (``C``: what its detector reads, one run's
    :class:`Context` for the per-run table).

    Attributes:
        id: stable id (``per-call-input-pipeline``).
        title: one line.
        detect: measures the finding on one run, or returns None when it does not apply.
        fixes: the fix text by call kind (``CallKind`` values) or by a variant the detector
            names; ``"other"`` is the fallback. ``{name}`` placeholders take the detection's
            values. A key ending in ``@line`` is the text for when the finding's line of the
            user's code is known: it comes first, with ``{line}`` (``app.py:34``),
            ``{code}`` (its text) and ``{function}`` (the user's function) filled in.
        thresholds: the numbers the detector compares against, by name.
        bands: impact from which the severity is ``high`` and ``medium`` (else ``low``).
        ceilings: the highest severity a variant can have (``"other"``: no variant named).
            A one-time cost whose only advice is how to time it (a warm-up call) is paid once
            per process whatever its share of a profile of tfdiag's length: it informs
            (``low``), it is not a cause of a slow program; its variants that name a fix
            that removes the cost (an unrolled loop) keep the bands.
        when: when it fires, in words (docs/catalog.md).
        tier: how it ranks against the others (:data:`TIERS`): a share of every iteration a
            fix removes (``steady``), a conclusion about what is left (``conclusion``: the
            model's own ops), a one-time cost (``one-time``), or a pattern of the iteration
            times (``timing``: spikes, drift), which ranks below the others of its severity.
    """

    id: str
    title: str
    detect: Callable[[C], Detection | None]
    fixes: Mapping[str, str]
    thresholds: Mapping[str, float] = field(default_factory=dict)
    bands: tuple[float, float] = (0.3, 0.1)
    ceilings: Mapping[str, str] = field(default_factory=dict)
    when: str = ""
    tier: str = "steady"
    #: The title on another backend where ``title`` names TensorFlow (by backend name).
    titles: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if "other" not in self.fixes:
            raise ValueError(f"finding {self.id!r}: its fixes need an 'other' entry")
        if self.tier not in TIERS:
            raise ValueError(f"finding {self.id!r}: tier must be one of {TIERS}")
        object.__setattr__(self, "fixes", MappingProxyType(dict(self.fixes)))
        object.__setattr__(self, "thresholds", MappingProxyType(dict(self.thresholds)))
        object.__setattr__(self, "titles", MappingProxyType(dict(self.titles)))
        object.__setattr__(self, "ceilings", MappingProxyType(dict(self.ceilings)))
        bad = set(self.ceilings.values()) - {"high", "medium", "low"}
        if bad:
            raise ValueError(f"finding {self.id!r}: unknown ceiling severity {sorted(bad)}")

    def title_for(self, backend: str | None) -> str:
        """The title on ``backend`` (None: TensorFlow's)."""
        return self.titles.get(backend, self.title) if backend is not None else self.title

    def severity(self, impact: float, variant: str | None = None) -> str:
        """The severity of ``impact`` by the bands, at most the variant's ceiling."""
        high, medium = self.bands
        banded = "high" if impact >= high else "medium" if impact >= medium else "low"
        ceiling = self.ceilings.get(variant or "other")
        if ceiling is None:
            return banded
        order = ("low", "medium", "high")
        return min(banded, ceiling, key=order.index)

    def fix_for(
        self,
        detection: Detection,
        kind: CallKind,
        *,
        leads: bool = False,
        alone: bool = False,
        backend: str | None = None,
    ) -> str:
        """The fix text for this run (:meth:`fix_key_for`'s, filled in)."""
        key = self.fix_key_for(detection, kind, leads=leads, alone=alone, backend=backend)
        return _fill(self.fixes[key], detection.values)

    def fix_key_for(
        self,
        detection: Detection,
        kind: CallKind,
        *,
        leads: bool = False,
        alone: bool = False,
        backend: str | None = None,
    ) -> str:
        """The key of the fix text for this run: the detection's variant when it has one of its own
        (the cause found names its fix), else the ``alone`` text when the finding leads and
        no steady-state finding follows, the ``first`` text when it leads ahead of some, else
        the call kind's.

        On a ``backend`` (``jax``) the ``jax:<key>`` texts come first, in the same order;
        a finding with a ``jax:other`` text never falls back to the plain (TensorFlow) ones.
        """
        variant = detection.variant
        own = (
            variant
            if variant is not None
            and (
                variant in self.fixes
                or (backend is not None and f"{backend}:{variant}" in self.fixes)
            )
            else None
        )
        # The cause found names its own fix, before the texts of where the finding ranks.
        keys = (own, "alone" if leads and alone else None, "first" if leads else None)
        chain = [k for k in (*keys, variant, kind.value, "other") if k is not None]
        if "code" in detection.values and "line" in detection.values:
            # the user's line is known: a text that names it comes before the one that cannot
            chain = [x for k in chain for x in (f"{k}@line", k)]
        if backend is not None:
            prefixed = [f"{backend}:{k}" for k in chain]
            chain = prefixed if f"{backend}:other" in self.fixes else prefixed + chain
        for key in chain:
            if key in self.fixes:
                return key
        raise AssertionError("unreachable: 'other' is required")


#: Ranking tiers (see :func:`tfdiag.advise.advise`).
TIERS = ("steady", "conclusion", "one-time", "timing")


class _Missing(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _fill(template: str, values: Mapping[str, Any]) -> str:
    """``str.format_map`` that leaves an unknown ``{name}`` as it is, and ignores ``{{``."""
    if not values or "{" not in template:
        return template
    return string.Formatter().vformat(template, (), _Missing(values))
