"""The finding types: what a detector returns and what a report carries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfdiag.analysis import Analysis
    from tfdiag.report import Report


@dataclass(frozen=True)
class Finding:
    """One diagnosis: ``id`` is stable across versions; ``evidence`` is this run's numbers."""

    id: str
    title: str
    severity: str
    impact: float
    evidence: tuple[str, ...]
    fix: str


@dataclass(frozen=True)
class Detection:
    impact: float
    evidence: tuple[str, ...]
    fix: str


@dataclass(frozen=True)
class FindingSpec:
    id: str
    title: str
    detect: Callable[[Report, Analysis], Detection | None]
