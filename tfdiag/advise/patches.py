"""A finding's patch in a saved ``tfdiag fix`` result: the record ``tfdiag fix`` wrote for
it, found again by the finding's id and its own line."""

from __future__ import annotations

from tfdiag.advise.finding import Finding
from tfdiag.records.patches import FixRecord, PatchRecord


def finding_at(f: Finding) -> str:
    """The finding's own line (``train.py:34``), "" when it names none: what a
    :class:`~tfdiag.records.patches.PatchRecord` is keyed by beside the id."""
    return f.line.location if f.line is not None and f.line.line else ""


def patch_of(fix: FixRecord | None, f: Finding) -> PatchRecord | None:
    """The patch ``tfdiag fix`` recorded for ``f`` (None: no fix ran, or none for it)."""
    return None if fix is None else fix.for_finding(f.id, finding_at(f))
