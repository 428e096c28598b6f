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


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
