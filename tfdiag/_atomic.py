"""Write a set of files atomically: all of them land, or none does.

A folder in the set (``path -> {relative path: bytes}``) is staged as a whole in a
temporary folder beside its target and renamed into place, like a file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from tfdiag.errors import InputError

#: A file's bytes, or a folder's files by relative path.
Content = bytes | Mapping[str, bytes]


def write_set(files: Mapping[Path, Content], *, overwrite: bool = False) -> None:
    """Write every ``path -> data`` through a temporary file (or folder) and a rename.

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
            if isinstance(data, bytes):
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
                temps[path] = tmp
                os.chmod(tmp, _mode_for(path))
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
            else:
                tmp = tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
                temps[path] = tmp
                os.chmod(tmp, 0o777 & ~_umask())
                _stage_folder(Path(tmp), data)
    except OSError as exc:
        for tmp in temps.values():
            _remove(tmp)
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    for path, tmp in temps.items():
        if os.path.isdir(tmp) or path.is_dir():
            _replace_folder(tmp, path)
        else:
            os.replace(tmp, path)


def _stage_folder(root: Path, files: Mapping[str, bytes]) -> None:
    for rel, data in files.items():
        target = (root / rel).resolve()
        if root.resolve() not in target.parents:
            raise OSError(f"{rel}: not inside the folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def _replace_folder(tmp: str, path: Path) -> None:
    """Rename ``tmp`` onto ``path``; an old ``path`` is moved aside first, then removed."""
    aside = None
    if path.is_dir() and not path.is_symlink():
        aside = tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent)
        os.replace(path, aside)  # onto the empty folder just made
    elif path.exists() or path.is_symlink():
        path.unlink()
    os.replace(tmp, path)
    if aside is not None:
        _remove(aside)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _mode_for(path: Path) -> int:
    """The existing file's mode, or what a plain ``open()`` would give (mkstemp uses 0600)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o666 & ~_umask()


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        os.unlink(path)
    except OSError:
        pass
