"""``--apply``: a verified patch written to the user's file, safely.

Only a file under the script's folder is written, only when its content still hashes to
what was run and measured, only when the new text compiles, atomically (a temporary file
beside it, then a rename), with the old content kept beside it (``train.py.orig``).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tfdiag.fix.outcome import Edit
from tfdiag.fix.source import digest
from tfdiag.records.errors import InputError


@dataclass(frozen=True)
class Written:
    """A file written: where, and where its old content was kept."""

    path: Path
    backup: Path


def check(edit: Edit, root: Path) -> Path:
    """The file ``edit`` may write, or InputError saying why not (one sentence)."""
    path = Path(edit.file).resolve()
    if not path.is_relative_to(root.resolve()):
        raise InputError(f"{path} is outside the script's folder {root}: not written")
    try:
        now = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read it back ({exc.strerror or exc})") from None
    if digest(now) != digest(edit.before):
        raise InputError(f"{path} changed since it was run: run `tfdiag fix` again")
    try:
        compile(edit.after, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise InputError(
            f"the patched {path.name} does not compile ({exc.msg}): not written"
        ) from None
    return path


def write(edit: Edit, root: Path, suffix: str = ".orig") -> Written:
    """Write ``edit``: checked (:func:`check`), its old content in ``file + suffix`` (a
    backup that exists already is never replaced), atomically."""
    path = check(edit, root)
    backup = path.with_name(path.name + suffix)
    if backup.exists():
        raise InputError(f"{backup} exists: move it away or choose another --backup suffix")
    mode = path.stat().st_mode & 0o7777
    backup.write_text(edit.before, encoding="utf-8")
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tfdiag-fix", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(edit.after)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return Written(path, backup)
