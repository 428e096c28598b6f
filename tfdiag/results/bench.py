"""``tfdiag.measure.BenchResult``: the bench grid's record with its output formats."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tfdiag.records.bench import BenchRecord, bench_paths
from tfdiag.records.files import Content
from tfdiag.records.jsontext import indented_json
from tfdiag.results.base import Result


@dataclass(frozen=True)
class BenchResult(BenchRecord, Result):
    """The seeds' grid, measured. Build it with ``python -m tfdiag bench``."""

    def save(self, path: str | Path, *, overwrite: bool = False) -> tuple[Path, ...]:
        """Write ``<stem>.json`` and ``<stem>.csv`` as one atomic set; returns both paths
        (JSON first). A path ending in another format's suffix (``.html``, ``.txt``) writes
        that format alone, and its path is returned."""
        return self._write(path, overwrite=overwrite)

    def _files(self, path: Path) -> dict[Path, Content]:
        from tfdiag.render.formats import document, format_for_path, write

        fmt = format_for_path(self.kind, path)
        if fmt is not None and fmt.name not in ("json", "csv"):  # .html, .txt: that format alone
            return super()._files(path)

        json_path, csv_path = bench_paths(path)
        text = indented_json(document(self))
        csv_text = write(self, "csv")
        assert isinstance(csv_text, str)
        return {json_path: text.encode("utf-8"), csv_path: csv_text.encode("utf-8")}
