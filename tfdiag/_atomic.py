"""Write a set of files atomically: all of them land, or none does."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from tfdiag.errors import InputError


def write_set(files: Mapping[Path, bytes], *, overwrite: bool = False) -> None:
    """Write every ``path -> data`` through a temporary file and a rename.

    Nothing is overwritten unless ``overwrite``; if any write fails, the files
    that were there before are left as they were and no temporary file remains.

    Raises:
        InputError: a target exists (without ``overwrite``) or its folder is unwritable.
    """
    if not overwrite:
        taken = [str(p) for p in files if p.exists()]
        if taken:
            raise InputError(f"{taken[0]} exists; pass overwrite=True (CLI: --force) to replace it")
    temps: dict[Path, str] = {}
    try:
        for path, data in files.items():
            folder = path.parent if str(path.parent) else Path(".")
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
            temps[path] = tmp
            os.chmod(tmp, _mode_for(path))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
    except OSError as exc:
        for tmp in temps.values():
            _unlink(tmp)
        raise InputError(f"cannot write {exc.filename or path}: {exc.strerror or exc}") from None
    for path, tmp in temps.items():
        os.replace(tmp, path)


def _mode_for(path: Path) -> int:
    """The existing file's mode, or what a plain ``open()`` would give (mkstemp uses 0600)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
