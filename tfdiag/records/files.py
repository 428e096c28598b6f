"""Write a set of files atomically: all of them land, or none does.

A folder in the set (``path -> {relative path: bytes}``) is staged as a whole in a
temporary folder beside its target and renamed into place, like a file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from tfdiag.records.errors import InputError

#: A file's bytes, or a folder's files by relative path.
Content = bytes | Mapping[str, bytes]


def check_targets(paths: Iterable[Path], *, overwrite: bool = False) -> None:
    """Fail now, before a long run, if ``write_set`` would refuse these paths later.

    Raises:
        InputError: a target exists (without ``overwrite``), or its folder is missing or
            not writable.
    """
    paths = list(paths)
    if not overwrite:
        _refuse_existing(paths)
    for path in paths:
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise InputError(f"cannot write {path}: {folder} is not a folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"cannot write {path}: {folder} is not writable")


def _refuse_existing(paths: Iterable[Path]) -> None:
    for path in paths:
        if os.path.lexists(path):
            raise InputError(
                f"{path} exists; pass --force (overwrite=True in Python) to replace it"
            )


def write_set(files: Mapping[Path, Content], *, overwrite: bool = False) -> None:
    """Write every ``path -> data`` through a temporary file (or folder) and a rename.

    Nothing is overwritten unless ``overwrite``; if any write fails, the files
    that were there before are left as they were and no temporary file remains.

    Raises:
        InputError: a target exists (without ``overwrite``) or its folder is unwritable.
    """
    if not overwrite:
        _refuse_existing(files)
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
        _swap_in(temps)
    except BaseException as exc:  # Ctrl-C too: never leave temporaries behind
        for tmp in temps.values():
            _remove(tmp)
        if isinstance(exc, OSError):
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


def _swap_in(temps: Mapping[Path, str]) -> None:
    """Rename every temporary onto its target, all or none: existing targets are moved
    aside first and put back if any rename fails."""
    aside: list[tuple[Path, str | None]] = []
    try:
        for path, tmp in temps.items():
            old = None
            if path.exists() or path.is_symlink():
                old = tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent)
                os.rmdir(old)  # a free name beside the target
                os.replace(path, old)
            aside.append((path, old))
            os.replace(tmp, path)
    except BaseException:
        for path, old in reversed(aside):
            if os.path.lexists(path):  # the new file, if its rename happened
                _remove(str(path))
            if old is not None:
                os.replace(old, path)
        raise
    for _, old in aside:
        if old is not None:
            _remove(old)


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
