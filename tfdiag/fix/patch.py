"""A proposed fix: the finding it answers, the edit (or why there is none), its unified
diff as ``git diff`` prints it, and, once measured, what both versions of the program did."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tfdiag.fix.outcome import Edit
from tfdiag.records.patches import PatchRecord

if TYPE_CHECKING:
    from tfdiag.records.patches import Verified


def unified_diff(before: str, after: str, path: str) -> str:
    """``before`` → ``after`` as ``git diff`` prints it (``path`` relative, forward slashes),
    so ``git apply`` and ``patch -p1`` take it."""
    path = path.replace(os.sep, "/")
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"a/{path}",
        f"b/{path}",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return f"diff --git a/{path} b/{path}\n" + "".join(out) if out else ""


@dataclass(frozen=True)
class Proposal:
    """One finding and its patch.

    Attributes:
        finding: the finding's id; ``remedy``: its remedy key; ``location``: its line
            (``train.py:34``, "" when it names none); ``fix``: its advice.
        kind: the edit kind (:data:`~tfdiag.fix.edits.EDITS`), "" when none answers it.
        edit: the edit, None when none is mechanical; ``reason`` says why then.
        relpath: the edited file, relative to the script's folder.
        verified: both versions run and compared (None: not measured).
        at: the finding's own line ("" when it names none); ``shared``: the other findings
            (id, line) the same edit answers (a pipeline built per call and its traces).
    """

    finding: str
    remedy: str | None
    location: str
    fix: str
    kind: str = ""
    edit: Edit | None = None
    reason: str = ""
    relpath: str = ""
    verified: Verified | None = None
    at: str = ""
    shared: tuple[tuple[str, str], ...] = ()

    @property
    def patch(self) -> str:
        """The unified diff ("" with no edit)."""
        if self.edit is None:
            return ""
        return unified_diff(self.edit.before, self.edit.after, self.relpath)

    @property
    def offered(self) -> bool:
        """A patch measured faster with matching outputs: the one ``--apply`` writes."""
        return self.edit is not None and self.verified is not None and self.verified.ok

    def measured(self, verified: Verified) -> Proposal:
        return replace(self, verified=verified)

    def records(self) -> tuple[PatchRecord, ...]:
        """As saved data (:class:`~tfdiag.records.patches.PatchRecord`): one for its own
        finding and one for each finding it shares its edit with."""
        e = self.edit
        own = PatchRecord(
            finding=self.finding,
            at=self.at,
            location=self.location,
            kind=self.kind,
            patch=self.patch,
            summary=e.summary if e else "",
            reason=self.reason,
            file=self.relpath.replace(os.sep, "/") if e else "",
            line=e.line if e else 0,
            new_line=e.new_line if e else 0,
            verified=self.verified,
        )
        return (own, *(replace(own, finding=f, at=at) for f, at in self.shared))

    def to_json(self) -> dict[str, Any]:
        return {
            "finding": self.finding,
            "remedy": self.remedy,
            "location": self.location,
            "kind": self.kind or None,
            "patch": self.patch or None,
            "summary": self.edit.summary if self.edit else None,
            "file": self.relpath or None,
            "line": self.edit.line if self.edit else None,
            "reason": self.reason or None,
            "verified": self.verified.to_json() if self.verified else None,
            "offered": self.offered,
        }
