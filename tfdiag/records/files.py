"""Write a set of files so that a reader only ever finds one complete set: the earlier one
or the new one.

``write_set({path: data, ...})`` — the first path is the set's *commit* file (a report's
JSON), switched last. Under the set's lock (:mod:`tfdiag.records.savelock`) every file (or
folder, ``{relative path: bytes}``) is written and fsynced beside its target as
``.<name>.<pid>.<token>.tmp``; the journal is written; then each target is switched — the
earlier file kept as a second link ``.<name>.<pid>.<token>.old`` (``<name>``
shortened to a hash when long) and the new one renamed
over it, so the target is never missing — and the commit file last. Without
``overwrite`` a new file is placed with ``link()``, which fails if anything appeared at
its name meanwhile, so of two savers of one new path exactly one wins. Overwrite replaces
files, never a folder (the one folder a set writes, the TF profiler's logdir, replaces an
earlier logdir that holds nothing but plugin data).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from tfdiag.records.errors import InputError
from tfdiag.records.journal import Entry, finish_or_undo, remove, short_name
from tfdiag.records.savelock import SaveLock, settle_crashed_save

__all__ = ["Content", "check_targets", "settle_crashed_save", "write_set"]

#: A file's bytes, or a folder's files by relative path.
Content = bytes | Mapping[str, bytes]

#: ``link()`` cannot make a second name here (FAT, some network filesystems): rename instead.
_NO_LINKS = {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOSYS, errno.EOPNOTSUPP}
#: A replaceable earlier logdir holds at most this many entries, all under ``plugins/``.
_MAX_LOGDIR_ENTRIES = 100_000


def check_targets(paths: Iterable[Path], *, overwrite: bool = False) -> None:
    """Fail now, before a long run, if ``write_set`` would refuse these (file) paths later.

    Raises:
        InputError: a target exists (without ``overwrite``), is a folder, or its folder is
            missing or not writable.
    """
    for path in paths:
        _check_target(Path(path), overwrite=overwrite, folder=False)


def _check_target(path: Path, *, overwrite: bool, folder: bool) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"cannot write {path}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"cannot write {path}: {parent} is not writable")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode) and not (folder and _only_plugin_data(path)):
        raise InputError(
            f"{path} is a folder; tfdiag replaces files, never folders (move it, or save "
            "under another name)"
        )
    if not overwrite:
        raise InputError(f"{path} exists; pass --force (overwrite=True in Python) to replace it")


def _only_plugin_data(folder: Path) -> bool:
    """An earlier TF profiler logdir: only folders and plain files, all under ``plugins/``."""
    seen = 0
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        for name in (*dirs, *files):
            seen += 1
            p = Path(root, name)
            top = (rel / name).parts[0]
            if seen > _MAX_LOGDIR_ENTRIES or top != "plugins" or p.is_symlink():
                return False
            if name in files and not p.is_file():
                return False
    return True


def write_set(files: Mapping[Path, Content], *, overwrite: bool = False) -> None:
    """Write every ``path -> data`` as one set; the first path is switched last.

    Raises:
        InputError: a target exists (without ``overwrite``) or is a folder, another save of
            the set is running, or a write fails (the message names the file; the earlier
            set is left as it was and no temporary remains).
    """
    items = [(Path(p), d) for p, d in files.items()]
    if not items:
        return
    ordered = [*items[1:], items[0]]  # the commit file last
    with SaveLock(items[0][0], [p for p, _ in items]) as lock:
        for path, data in items:
            _check_target(path, overwrite=overwrite, folder=not isinstance(data, bytes))
        _Switch(ordered, overwrite, lock).run()


class _Switch:
    """Stage every file, journal, switch; on any error put the earlier set back."""

    def __init__(self, items: list[tuple[Path, Content]], overwrite: bool, lock: SaveLock) -> None:
        self.items, self.overwrite, self.lock = items, overwrite, lock
        self.entries: list[Entry] = []
        self.switching = False
        self.current = items[-1][0]

    def run(self) -> None:
        try:
            for path, data in self.items:
                self.current = path
                self.entries.append(_stage(path, data))
            self.lock.journal(self.entries)
            self.switching = True
            for entry in self.entries:
                self.current = Path(entry.target)
                self._place(entry)
            finish_or_undo(self.entries)  # switched: drop the parked files
            for folder in {Path(e.target).parent for e in self.entries}:
                _fsync_folder(folder)
        except BaseException as exc:  # Ctrl-C too: never leave a mixed set or temporaries
            try:
                self._undo()
            except BaseException:
                self.lock.keep_journal = True  # the next save or reader settles it
            if isinstance(exc, OSError):
                raise InputError(f"cannot write {self.current}: {exc.strerror or exc}") from None
            raise

    def _undo(self) -> None:
        if self.switching:
            finish_or_undo(self.entries)
        else:
            for e in self.entries:
                remove(e.temp)

    def _place(self, e: Entry) -> None:
        target, temp = e.target, e.temp
        if e.parked is not None:
            if e.folder or os.path.islink(target):
                os.rename(target, e.parked)
            else:
                try:
                    os.link(target, e.parked)
                except OSError as exc:
                    if exc.errno not in _NO_LINKS:
                        raise
                    os.rename(target, e.parked)
        elif e.folder:
            if os.path.lexists(target):
                raise FileExistsError(errno.EEXIST, "appeared while saving", target)
        elif not self.overwrite:
            _link_new(temp, target)
            return
        if e.folder:
            os.rename(temp, target)  # onto nothing, or an empty folder: never a full one
        else:
            os.replace(temp, target)


def _link_new(temp: str, target: str) -> None:
    """Give the staged file its final name only if nothing has that name yet."""
    try:
        os.link(temp, target)
    except FileExistsError:
        raise InputError(
            f"{target} exists; pass --force (overwrite=True in Python) to replace it"
        ) from None
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        if os.path.lexists(target):
            raise InputError(
                f"{target} exists; pass --force (overwrite=True in Python) to replace it"
            ) from None
        os.rename(temp, target)
        return
    os.unlink(temp)


def _name(path: Path, kind: str) -> str:
    """``.<name>.<pid>.<token>.tmp|old`` (a name over 200 bytes: a hash of it instead)."""
    token = secrets.token_hex(4)
    return str(path.with_name(f".{short_name(path.name)}.{os.getpid()}.{token}.{kind}"))


def _stage(path: Path, data: Content) -> Entry:
    temp = _name(path, "tmp")
    existing = os.path.lexists(path)
    if isinstance(data, bytes):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(temp, flags, 0o666)
        try:
            mode = _existing_mode(path)
            if mode is not None:
                os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as fh:
                fd = -1  # the file object closes it now
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
                st = os.fstat(fh.fileno())
        except BaseException:
            if fd >= 0:
                with contextlib.suppress(OSError):  # already closed by a failed fdopen
                    os.close(fd)
            os.unlink(temp)
            raise
        folder = False
    else:
        os.mkdir(temp, 0o777)
        try:
            _stage_folder(Path(temp), data)
        except BaseException:
            remove(temp)
            raise
        st = os.lstat(temp)
        folder = True
    parked = _name(path, "old") if existing else None
    return Entry(str(path), temp, st.st_dev, st.st_ino, parked, folder)


def _stage_folder(root: Path, files: Mapping[str, bytes]) -> None:
    for rel, data in files.items():
        target = (root / rel).resolve()
        if root.resolve() not in target.parents:
            raise OSError(errno.EINVAL, f"{rel}: not inside the folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def _existing_mode(path: Path) -> int | None:
    """The mode of the file being replaced (a new file gets what ``open()`` would give)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def _fsync_folder(folder: Path) -> None:
    """Make the renames durable (a power cut after the save returns keeps the new set)."""
    try:
        fd = os.open(folder if str(folder) else ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
