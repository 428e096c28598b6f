"""``--apply``: a verified patch written to the user's file, safely.

Only a file under the script's folder is written, only when its bytes still hash to what
was run and measured, only when it is writable (a read-only file is the user's "do not
touch"), only when the new text compiles, atomically (a temporary file beside it, then a
rename), with the old bytes kept beside it (``train.py.orig``), created new: an existing
backup, or a link at its name, is never written through or replaced. The file keeps its
encoding, BOM and line endings (:func:`tfdiag.fix.source.decode`).
"""

from __future__ import annotations

import os
import stat
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
        now = path.read_bytes()
        mode = path.stat().st_mode
    except OSError as exc:
        raise InputError(f"{path}: cannot read it back ({exc.strerror or exc})") from None
    if digest(now) != digest(edit.old_bytes):
        raise InputError(f"{path} changed since it was run: run `tfdiag fix` again")
    if not mode & stat.S_IWUSR:
        raise InputError(f"{path} is read-only: not written (make it writable to apply)")
    try:
        compile(edit.new_bytes, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        msg = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        raise InputError(f"the patched {path.name} does not compile ({msg}): not written") from None
    return path


def _backup(path: Path, data: bytes) -> None:
    """``data`` in a new file at ``path``: O_EXCL, so neither a file nor a link (dangling
    or not) there is ever written through; the whole of it, or no file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise InputError(f"{path} exists: move it away or choose another --backup suffix") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def write(edit: Edit, root: Path, suffix: str = ".orig") -> Written:
    """Write ``edit``: checked (:func:`check`), its old bytes in ``file + suffix`` (a
    backup that exists already is never replaced), atomically."""
    path = check(edit, root)
    backup = path.with_name(path.name + suffix)
    mode = path.stat().st_mode & 0o7777
    _backup(backup, edit.old_bytes)
    os.chmod(backup, mode)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tfdiag-fix", dir=path.parent)
    except BaseException:
        backup.unlink(missing_ok=True)
        raise
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(edit.new_bytes)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:  # nothing written: no new file, and no backup of a file kept
        Path(temp).unlink(missing_ok=True)
        backup.unlink(missing_ok=True)
        raise
    return Written(path, backup)
