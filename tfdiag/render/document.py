"""What every saved result's JSON starts with (schema, kind, the tool that wrote it, when),
and a finding as every result's JSON writes it."""

from __future__ import annotations

from typing import Any, Protocol

from tfdiag.advise.finding import Finding
from tfdiag.records.verification import verification_view
from tfdiag.records.version import __version__


class Saved(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def schema_version(self) -> int: ...
    @property
    def created(self) -> str: ...


def header(record: Saved) -> dict[str, Any]:
    return {
        "schema_version": record.schema_version,
        "kind": record.kind,
        "tool": f"tfdiag {__version__}",
        "created": record.created,
    }


def finding_to_json(f: Finding) -> dict[str, Any]:
    """A finding in every JSON document: its text, the fields beside it (a straggler's
    ``slow_workers``) and, when it was verified, the verification's view."""
    doc: dict[str, Any] = {
        "id": f.id,
        "title": f.title,
        "severity": f.severity,
        "impact": f.impact,
        "evidence": list(f.evidence),
        "fix": f.fix,
        **dict(f.data),
    }
    if f.line is not None:
        doc["line"] = f.line.to_json()
    if f.remedy is not None:
        doc["remedy"] = f.remedy
    if f.verification is not None:
        doc["verification"] = verification_view(f.verification)
    return doc
