"""The lock and journal of one save, and how a crashed save is settled.

A save of a set holds ``.<commit>.lock`` beside the set's commit file (the report's JSON)
under ``flock`` for as long as it runs, so two savers of one set never interleave, and the
kernel releases it when the process dies however it dies. The lock file is also the
save's journal: before the first file is switched it lists every target, its temporary,
the temporary's inode and where the earlier file is parked, all by name in the lock's own
folder. Whoever next takes the lock of a save that died (the next save of that set, or a
reader of it) *settles* it from the journal (:mod:`tfdiag.records.journal`, which checks
every name first): if the commit file is already the new one, the switch is finished; else
every target goes back to the earlier file. Either way one complete set is left, and the
dead process's temporaries and parked files go.

The lock is opened without following a link (created with ``O_EXCL``) and must be a
regular file with one link, owned by the user. A reader never creates, truncates or
rewrites a lock: it settles an existing one or leaves it. A saver waits up to
:data:`WAIT_S` for a reader or another saver to let go.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfdiag.records.errors import InputError, SaveJournalWarning
from tfdiag.records.journal import (
    Entry,
    Untrusted,
    finish_or_undo,
    parse,
    pid_alive,
    plain_name,
    remove,
    remove_debris,
    short_name,
)

__all__ = ["Entry", "SaveLock", "finish_or_undo", "lock_path", "remove", "settle_crashed_save"]

try:
    import fcntl
except ImportError:  # Windows: an exclusive create, with the holder's pid for staleness
    fcntl = None  # type: ignore[assignment]

#: A journal lists a set's files (a capture of 1,000 workers: about 0.6 MiB).
MAX_JOURNAL_BYTES = 16 * 2**20
#: How long a saver waits for the lock (a reader settling, another save finishing).
WAIT_S = 5.0
_POLL_S = 0.01
_GONE = "was removed"
_FLAGS = os.O_NOFOLLOW if hasattr(os, "O_NOFOLLOW") else 0
_FLAGS |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def lock_path(commit: Path) -> Path | None:
    """``.<name>.lock`` beside ``commit`` (``None``: the path names no file, as ``.``)."""
    if not plain_name(commit.name):
        return None
    return commit.with_name(f".{short_name(commit.name)}.lock")


class SaveLock:
    """``with SaveLock(commit, targets):`` holds the set's lock; a crashed earlier save of the
    set is settled on entry. ``journal(entries)`` records the switch before it starts.

    Raises:
        InputError: another process holds the lock past :data:`WAIT_S`, the lock's name is
            taken by something that is not a lock (a link, a folder), a crashed earlier
            save cannot be settled, or the folder is not writable.
    """

    def __init__(self, commit: Path, targets: Sequence[Path]) -> None:
        path = lock_path(commit)
        if path is None:
            raise InputError(f"{commit}: not a usable file name")
        if any(Path(t).parent != commit.parent for t in targets):
            raise ValueError("every file of a set is saved in its commit file's folder")
        self.commit, self.path = commit, path
        self.names = [Path(t).name for t in targets]
        self.fd: int | None = None
        #: An undo that failed half-way: leave the journal for the next save or reader.
        self.keep_journal = False

    def __enter__(self) -> SaveLock:
        self.fd = _acquire(self.path, self.commit)
        try:
            _settle(self.fd, self.path, self.commit)  # one it will not act on: warned, replaced
            self._write({"pid": os.getpid(), "targets": self.names}, durable=False)
            remove_debris(self.commit.parent, self.names)
        except OSError as exc:
            self.keep_journal = True  # whatever it held is still to be settled
            self._release()
            raise InputError(f"cannot write {self.commit}: {exc.strerror or exc}") from None
        except BaseException:
            self._release()
            raise
        return self

    def journal(self, entries: Sequence[Entry]) -> None:
        """Record the switch (fsynced) before its first rename: what settling needs."""
        self._write(
            {
                "pid": os.getpid(),
                "targets": self.names,
                "entries": [e.to_journal() for e in entries],
            },
            durable=True,
        )

    def _write(self, doc: dict[str, Any], *, durable: bool) -> None:
        assert self.fd is not None
        data = json.dumps(doc).encode("utf-8")
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)
        if durable:
            os.fsync(self.fd)

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
    reader calls this before reading). Takes only a lock that exists; does nothing while a
    live save holds it; warns (one line) and leaves the journal where it cannot act on it."""
    path = lock_path(commit)
    if path is None:
        return
    try:
        fd = os.open(path, os.O_RDONLY | _FLAGS)
    except FileNotFoundError:
        return
    except OSError as exc:
        _warn(path, _refusal(path, exc))
        return
    try:
        problem = _check_lock_file(fd)
        if problem == _GONE:
            return  # its holder removed it as we opened it: nothing to settle
        if problem:
            _warn(path, f"it {problem}")
            return
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return  # a live save (or another reader settling it)
            if not _still_at(fd, path):
                return
        elif _live_holder(fd) is not None:
            return
        try:
            if _settle(fd, path, commit):
                os.unlink(path)
        except OSError as exc:
            _warn(path, f"a save that died could not be settled ({exc.strerror or exc}); kept")
    finally:
        os.close(fd)


def _settle(fd: int, path: Path, commit: Path) -> bool:
    """Apply the journal in the lock held at ``fd``: ``False`` if it was ignored (warned)."""
    if os.fstat(fd).st_size > MAX_JOURNAL_BYTES:
        _warn(path, f"it is larger than any journal ({MAX_JOURNAL_BYTES // 2**20} MiB)")
        return False
    doc = _read(fd)
    if doc is None:  # empty, or cut short by the crash: no switch had started
        return True
    try:
        entries, targets = parse(doc, commit.parent, commit.name)
    except Untrusted as exc:
        _warn(path, str(exc))
        return False
    finish_or_undo(entries)
    remove_debris(commit.parent, targets)
    return True


def _warn(path: Path, reason: str) -> None:
    warnings.warn(SaveJournalWarning(f"ignored the save lock {path}: {reason}"), stacklevel=4)


def _acquire(path: Path, commit: Path) -> int:
    deadline = time.monotonic() + WAIT_S
    for _ in range(100):
        fd = _open_for_saving(path, commit)
        if fd is None:
            continue  # removed between two opens: try again
        if fcntl is None:
            return _acquire_without_flock(fd, commit)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    holder = _live_holder(fd)
                    os.close(fd)
                    raise InputError(_busy(commit, path, holder)) from None
                time.sleep(_POLL_S)
        if _still_at(fd, path):  # the holder before us may have unlinked the file we opened
            return fd
        os.close(fd)
    raise InputError(f"cannot lock {commit} for saving (the lock file keeps changing)")


def _busy(commit: Path, path: Path, holder: int | None) -> str:
    if holder is not None:
        return f"another tfdiag (pid {holder}) is saving {commit} right now; try again when done"
    return (
        f"cannot save {commit}: its lock {path} is held by another process (a reader "
        f"settling it?) for over {WAIT_S:g} s; try again"
    )


def _open_for_saving(path: Path, commit: Path) -> int | None:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _FLAGS, 0o600)
    except FileExistsError:
        try:
            fd = os.open(path, os.O_RDWR | _FLAGS)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise InputError(f"cannot save {commit}: {path}: {_refusal(path, exc)}") from None
    except OSError as exc:
        raise InputError(f"cannot write {commit}: {exc.strerror or exc}") from None
    problem = _check_lock_file(fd)
    if problem == _GONE:  # removed by its holder as we opened it: try again
        os.close(fd)
        return None
    if problem:
        os.close(fd)
        raise InputError(f"cannot save {commit}: {path}: it {problem}; remove it")
    return fd


def _refusal(path: Path, exc: OSError) -> str:
    if exc.errno in (errno.ELOOP, errno.EMLINK) or os.path.islink(path):
        return "it is a symbolic link, and tfdiag never follows one at a lock's name"
    return f"it cannot be opened ({exc.strerror or exc})"


def _check_lock_file(fd: int) -> str:
    """What makes the open file no lock of this user's (empty: nothing; :data:`_GONE`: it
    was removed since it was opened)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_nlink == 0:
        return _GONE
    if st.st_nlink != 1:
        return f"has {st.st_nlink} links (a lock has one)"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return "belongs to another user"
    return ""


def _still_at(fd: int, path: Path) -> bool:
    try:
        return os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _live_holder(fd: int) -> int | None:
    """The pid the journal names, if it is another process that is alive."""
    doc = _read(fd)
    pid = doc.get("pid") if isinstance(doc, dict) else None
    if type(pid) is int and pid > 0 and pid != os.getpid() and pid_alive(pid):
        return pid
    return None


def _acquire_without_flock(fd: int, commit: Path) -> int:
    holder = _live_holder(fd)
    if holder is not None:
        os.close(fd)
        raise InputError(
            f"another tfdiag (pid {holder}) is saving {commit} right now; try again when it is done"
        )
    return fd


def _read(fd: int) -> Any:
    """The journal's JSON (``None``: empty, or not JSON: cut short by a crash)."""
    try:
        data = os.pread(fd, MAX_JOURNAL_BYTES, 0)
        return json.loads(data.decode("utf-8")) if data.strip() else None
    except (OSError, ValueError, RecursionError):
        return None
