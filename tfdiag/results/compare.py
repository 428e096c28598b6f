"""``tfdiag.measure.CompareResult``: a comparison's record with its output formats."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tfdiag.records.compare import CompareRecord
from tfdiag.records.files import Content
from tfdiag.records.report import report_paths
from tfdiag.results.base import Result


@dataclass(frozen=True)
class CompareResult(CompareRecord, Result):
    """Every method measured on one model and data. Build it with :func:`tfdiag.compare`."""

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write ``<stem>.tfdiag.json`` (or ``path`` itself when it ends in .json), atomically.

        An existing file is not replaced unless ``overwrite``. Returns the path.
        """
        return self._write(path, overwrite=overwrite)[0]

    def _default_files(self, path: Path) -> dict[Path, Content]:
        from tfdiag.render.formats import document

        text = json.dumps(document(self), separators=(",", ":"), allow_nan=False)
        return {report_paths(path)[0]: text.encode("utf-8")}
