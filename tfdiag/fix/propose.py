"""From a report's findings to proposals: each finding's remedy picks an edit kind, the
edit is written on the user's file, and a finding no edit answers keeps its advice with
the reason."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from tfdiag.advise.finding import Finding
from tfdiag.fix.edits import Files, NoEdit, Target, kind_for
from tfdiag.fix.patch import Proposal
from tfdiag.fix.source import SKIPPED_DIRS

#: At most this many of the folder's own Python files are scanned for a switch.
MAX_SCANNED = 200


def resolve(file: str, root: Path) -> Path:
    """A recorded path as a file here: absolute as it is; relative to the working folder
    (as the script was run), else to the script's folder."""
    path = Path(file)
    if path.is_absolute():
        return path
    here = Path.cwd() / path
    return here if here.exists() else root / path


def _candidates(script: Path, root: Path, findings: Sequence[Finding]) -> tuple[Path, ...]:
    seen: dict[Path, None] = {script.resolve(): None}
    for f in findings:
        if f.line is not None and f.line.file:
            seen.setdefault(resolve(f.line.file, root).resolve(), None)
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".py") and len(seen) < MAX_SCANNED:
                seen.setdefault((Path(folder) / name).resolve(), None)
    return tuple(seen)


def _target(f: Finding, root: Path) -> Target:
    line = f.line
    if line is None or not line.file or not line.line:
        return Target(f.id, f.remedy or "", api=line.api if line else "", evidence=f.evidence)
    return Target(
        f.id,
        f.remedy or "",
        str(resolve(line.file, root).resolve()),
        line.line,
        line.code,
        line.api,
        line.function,
        line.function_line,
        f.evidence,
    )


def propose(findings: Iterable[Finding], script: str | Path) -> tuple[Proposal, ...]:
    """One proposal per finding (the report's order): an edit where a kind answers its
    remedy and the change is mechanical, else the reason. Two findings that lead to the
    same edit (a pipeline built per call and its traces) share the first's proposal."""
    found = tuple(findings)
    script_path = Path(script).resolve()
    root = script_path.parent
    files = Files(root, _candidates(script_path, root, found))
    out: list[Proposal] = []
    made: dict[tuple[str, str], int] = {}
    for f in found:
        at = location = f.line.location if f.line is not None and f.line.line else ""
        kind = kind_for(f.remedy)
        if kind is None:
            why = "no edit kind answers this fix yet" if f.remedy else "its fix names no line"
            out.append(Proposal(f.id, f.remedy, location, f.fix, reason=why, at=at))
            continue
        edit = kind.edit(files, _target(f, root))
        if isinstance(edit, NoEdit):
            out.append(
                Proposal(f.id, f.remedy, location, f.fix, kind.name, reason=edit.reason, at=at)
            )
            continue
        key = (edit.file, edit.after)
        if key in made:  # the same edit: one proposal, which answers this finding too
            first = out[made[key]]
            out[made[key]] = replace(first, shared=(*first.shared, (f.id, at)))
            continue
        made[key] = len(out)
        rel = os.path.relpath(edit.file, root)
        if not location or _target(f, root).file != edit.file:
            # the finding's line is elsewhere (inside the traced function, autograph's copy
            # of it): the proposal is where the edit is
            location = f"{rel}:{edit.line}"
        out.append(Proposal(f.id, f.remedy, location, f.fix, kind.name, edit, relpath=rel, at=at))
    return tuple(out)
