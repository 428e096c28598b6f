"""``tfdiag.script.ScriptResult``: a ``tfdiag run`` record with its output formats."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tfdiag.records.files import Content
from tfdiag.records.script import ScriptRecord
from tfdiag.results.base import Result

if TYPE_CHECKING:  # tfdiag.fix imports libcst: loaded by patches() alone, not with a result
    from tfdiag.fix.patch import Proposal


@dataclass(frozen=True)
class ScriptResult(ScriptRecord, Result):
    """One run of a user's script under ``tfdiag run``."""

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the JSON (what ``tfdiag explain`` reads) atomically; never overwrites
        unless ``overwrite``."""
        return self._write(path, overwrite=overwrite)[0]

    def patches(self) -> tuple[Proposal, ...]:
        """Each finding's patch to the script or a file beside it, or why none is
        mechanical: proposals, not measured (``tfdiag fix`` runs both versions)."""
        from tfdiag.advise.script import script_findings
        from tfdiag.fix.propose import propose

        return propose([sf.finding for sf in script_findings(self)], self.script)

    def _files(self, path: Path) -> dict[Path, Content]:
        from tfdiag.render.formats import document, format_for_path

        fmt = format_for_path(self.kind, path)
        if fmt is not None and fmt.name not in ("json",):  # .html, .txt: that format alone
            return super()._files(path)

        text = json.dumps(document(self), separators=(",", ":"), allow_nan=False)
        return {path: text.encode("utf-8")}
