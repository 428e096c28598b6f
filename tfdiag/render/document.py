"""What every saved result's JSON starts with: schema, kind, the tool that wrote it, when."""

from __future__ import annotations

from typing import Any, Protocol

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
