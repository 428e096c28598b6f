"""``tfdiag.measure.BenchResult``: the bench grid's record with its output formats."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tfdiag.records.bench import BenchRecord, bench_paths
from tfdiag.records.files import Content
from tfdiag.results.base import Result


@dataclass(frozen=True)
class BenchResult(BenchRecord, Result):
    """The seeds' grid, measured. Build it with ``python -m tfdiag bench``."""

    def save(self, path: str | Path, *, overwrite: bool = False) -> tuple[Path, Path]:
        """Write ``<stem>.json`` and ``<stem>.csv`` as one atomic set; returns both paths."""
        json_path, csv_path = self._write(path, overwrite=overwrite)
        return json_path, csv_path

    def _files(self, path: Path) -> dict[Path, Content]:
        from tfdiag.render.formats import document, write

        json_path, csv_path = bench_paths(path)
        text = json.dumps(document(self), indent=1, allow_nan=False)
        csv_text = write(self, "csv")
        assert isinstance(csv_text, str)
        return {json_path: text.encode("utf-8"), csv_path: csv_text.encode("utf-8")}
