"""The lock and journal of one save, and how a crashed save is settled.

A save of a set holds ``.<commit>.lock`` beside the set's commit file (the report's JSON)
under ``flock`` for as long as it runs, so two savers of one set never interleave, and the
kernel releases it when the process dies however it dies. The lock file is also the
save's journal: before the first file is switched it lists every target, its temporary,
the temporary's inode and where the earlier file is parked. Whoever next takes the lock
of a save that died (the next save of that set, or a reader of it) *settles* it from the
journal: if the commit file is already the new one, the switch is finished; else every
target goes back to the earlier file. Either way one complete set is left, and the dead
process's temporaries and parked files (named ``.<target>.<pid>.<token>.tmp|old``) go.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tfdiag.records.errors import InputError

try:
    import fcntl
except ImportError:  # Windows: an exclusive create, with the holder's pid for staleness
    fcntl = None  # type: ignore[assignment]

#: Debris of a save: ``.<target name>.<pid>.<8 hex>.tmp`` or ``.old``.
_DEBRIS = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.(?:tmp|old)$")


@dataclass(frozen=True)
class Entry:
    """One target of a save: its staged temporary (identified by inode, which a rename
    keeps) and where the earlier file at the target is parked (``None``: there was none)."""

    target: str
    temp: str
    dev: int
    ino: int
    parked: str | None
    folder: bool = False


def lock_path(commit: Path) -> Path:
    return commit.with_name(f".{commit.name}.lock")


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


class SaveLock:
    """``with SaveLock(commit, targets):`` holds the set's lock; a crashed earlier save of the
    set is settled on entry. ``journal(entries)`` records the switch before it starts.

    Raises:
        InputError: another live process holds the lock, or the folder is not writable.
    """

    def __init__(self, commit: Path, targets: Sequence[Path]) -> None:
        self.commit = commit
        self.path = lock_path(commit)
        self.targets = [str(t) for t in targets]
        self.fd: int | None = None
        #: An undo that failed half-way: leave the journal for the next save or reader.
        self.keep_journal = False

    def __enter__(self) -> SaveLock:
        self.fd = _acquire(self.path, self.commit)
        try:
            settle(_read(self.fd))
            _write(self.fd, {"pid": os.getpid(), "targets": self.targets}, durable=False)
            remove_debris(Path(t) for t in self.targets)
        except OSError as exc:
            self._release()
            raise InputError(f"cannot write {self.commit}: {exc.strerror or exc}") from None
        except BaseException:
            self._release()
            raise
        return self

    def journal(self, entries: Sequence[Entry]) -> None:
        """Record the switch (fsynced) before its first rename: what settling needs."""
        assert self.fd is not None
        doc = {"pid": os.getpid(), "targets": self.targets, "entries": [asdict(e) for e in entries]}
        _write(self.fd, doc, durable=True)

    def __exit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        if self.fd is None:
            return
        if not self.keep_journal:
            try:
                os.unlink(self.path)
            except OSError:
                pass
        os.close(self.fd)
        self.fd = None


def settle_crashed_save(commit: Path) -> None:
    """If a save of the set whose commit file is ``commit`` died mid-way, settle it now (a
    reader calls this before reading). Does nothing while a live save holds the lock, or
    where the folder cannot be written."""
    path = lock_path(commit)
    if not os.path.lexists(path):
        return
    try:
        with SaveLock(commit, []):
            pass
    except InputError:
        return


def _acquire(path: Path, commit: Path) -> int:
    for _ in range(10):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as exc:
            raise InputError(f"cannot write {commit}: {exc.strerror or exc}") from None
        if fcntl is None:
            return _acquire_without_flock(fd, path, commit)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read(fd).get("pid")
            os.close(fd)
            who = f"pid {holder}" if isinstance(holder, int) else "another process"
            raise InputError(
                f"another tfdiag ({who}) is saving {commit} right now; try again when it is done"
            ) from None
        try:  # the holder before us may have unlinked the file we opened: use the live one
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
    raise InputError(f"cannot lock {commit} for saving (the lock file keeps changing)")


def _acquire_without_flock(fd: int, path: Path, commit: Path) -> int:
    holder = _read(fd).get("pid")
    if isinstance(holder, int) and holder != os.getpid() and pid_alive(holder):
        os.close(fd)
        raise InputError(
            f"another tfdiag (pid {holder}) is saving {commit} right now; try again when it is done"
        )
    return fd


def _read(fd: int) -> dict[str, Any]:
    try:
        data = os.pread(fd, 1 << 20, 0)
        doc = json.loads(data.decode("utf-8")) if data.strip() else {}
    except (OSError, ValueError):  # a journal cut short by the crash: no switch had started
        return {}
    return doc if isinstance(doc, dict) else {}


def _write(fd: int, doc: dict[str, Any], *, durable: bool) -> None:
    data = json.dumps(doc).encode("utf-8")
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
    if durable:
        os.fsync(fd)


def settle(doc: dict[str, Any]) -> None:
    """Finish or undo the switch a journal describes; then remove its process's debris."""
    try:
        entries = [Entry(**e) for e in doc.get("entries", ())]
    except TypeError:
        entries = []
    if entries:
        finish_or_undo(entries)
    targets = doc.get("targets", ())
    if isinstance(targets, list):
        remove_debris(Path(t) for t in targets if isinstance(t, str))


def placed(e: Entry) -> bool:
    """The target holds the new file: the staged temporary's inode."""
    try:
        st = os.lstat(e.target)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (e.dev, e.ino)


def finish_or_undo(entries: Sequence[Entry]) -> None:
    """The commit file (the last entry) decides: switched → finish, else put every earlier
    file back. Safe to repeat after a crash in the middle of it."""
    if placed(entries[-1]):
        for e in entries:
            if e.parked is not None:
                remove(e.parked)
            if _same(e.temp, e.target):
                os.unlink(e.temp)  # a second name of the placed file
            else:
                remove(e.temp)
        return
    for e in reversed(entries):
        if placed(e):
            if os.path.lexists(e.temp):
                os.unlink(e.temp)
            remove(e.target)
        if e.parked is not None and os.path.lexists(e.parked):
            if os.path.lexists(e.target) and _same(e.target, e.parked):
                os.unlink(e.parked)  # parked as a second link: the target never changed
            else:
                os.replace(e.parked, e.target)
        remove(e.temp)


def remove_debris(targets: Iterable[Path]) -> None:
    """Temporaries and parked files of these targets left by processes no longer alive."""
    by_folder: dict[Path, set[str]] = {}
    for t in targets:
        by_folder.setdefault(t.parent, set()).add(t.name)
    for folder, names in by_folder.items():
        try:
            listing = os.listdir(folder if str(folder) else ".")
        except OSError:
            continue
        for entry in listing:
            m = _DEBRIS.match(entry)
            if m and m.group("name") in names and not pid_alive(int(m.group("pid"))):
                remove(str(folder / entry))


def _same(a: str, b: str) -> bool:
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def remove(path: str) -> None:
    """A file, link or folder, if it is there."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
