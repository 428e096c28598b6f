"""A save's journal as data: its internal names, how it is read back, and how a crashed
save is finished or undone from it.

A journal found beside a report is untrusted: it may come from a tarball, a shared folder
or a stray commit. It names files only by their names in the lock's own folder (never a
path), and a reader acts on it only if every name is one that tfdiag could have written
for that set: a target is the commit file or ``<stem>.<suffix>`` beside it, a temporary or
parked file is ``.<target>.<pid>.<8 hex>.tmp|old`` of that target with the journal's own
pid, which is no longer alive (or is this process), and every such file that exists is the
user's. Anything else and the journal is ignored, with one line saying why
(:class:`~tfdiag.records.errors.SaveJournalWarning`). The paths acted on are built here,
from the lock's folder and the checked names.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Debris of a save: ``.<short target name>.<pid>.<8 hex>.tmp`` or ``.old``.
DEBRIS = re.compile(r"^\.(?P<name>.+)\.(?P<pid>[1-9][0-9]{0,9})\.[0-9a-f]{8}\.(?P<kind>tmp|old)$")
#: Internal names carry a target's name up to this many bytes (a name may have 255: the
#: temporary's name, 22 bytes longer, would not fit), else a hash of it.
_KEEP_BYTES = 200
#: What a journal entry holds, and of which type.
_FIELDS: dict[str, type | tuple[type, ...]] = {
    "target": str,
    "temp": str,
    "dev": int,
    "ino": int,
    "parked": (str, type(None)),
}


class Untrusted(Exception):
    """A journal that tfdiag could not have written: the reason, one line."""


@dataclass(frozen=True)
class Entry:
    """One target of a save: its staged temporary (identified by inode, which a rename
    keeps) and where the earlier file at the target is parked (``None``: there was none).
    Paths here are full paths; the journal stores their names."""

    target: str
    temp: str
    dev: int
    ino: int
    parked: str | None
    folder: bool = False

    def to_journal(self) -> dict[str, Any]:
        parked = None if self.parked is None else os.path.basename(self.parked)
        return {
            "target": os.path.basename(self.target),
            "temp": os.path.basename(self.temp),
            "dev": self.dev,
            "ino": self.ino,
            "parked": parked,
            "folder": self.folder,
        }


def short_name(name: str) -> str:
    """The part of a target's name that its lock and temporary names carry: the name, or
    for one over 200 bytes a hash of it (a legal 255-byte name gets legal internal names)."""
    raw = os.fsencode(name)
    if len(raw) <= _KEEP_BYTES:
        return name
    return "tfdiag-" + hashlib.sha256(raw).hexdigest()[:24]


def set_stem(commit_name: str) -> str:
    """``run.tfdiag.json`` → ``run``; ``plot.png`` → ``plot``: a set's names start with it."""
    if commit_name.endswith(".tfdiag.json") and len(commit_name) > len(".tfdiag.json"):
        return commit_name[: -len(".tfdiag.json")]
    stem, dot, _ = commit_name.rpartition(".")
    return stem if dot and stem else commit_name


def of_set(name: str, commit_name: str) -> bool:
    """``name`` is a file name (not a path) that a save of this commit file may target."""
    if not plain_name(name):
        return False
    return name == commit_name or name.startswith(set_stem(commit_name) + ".")


def plain_name(name: str) -> bool:
    """A file's name, not a path: no separator, no NUL, not ``.`` or ``..``."""
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        return False
    return os.sep == "/" or ("\\" not in name and ":" not in name)


def parse(doc: Any, folder: Path, commit_name: str) -> tuple[list[Entry], list[str]]:
    """The entries (full paths, under ``folder``) and target names of a journal.

    Raises:
        Untrusted: anything in it that a save of this set by tfdiag could not have written.
    """
    if not isinstance(doc, dict):
        raise Untrusted("it is not a JSON object")
    pid = doc.get("pid")
    if type(pid) is not int or pid <= 0:
        raise Untrusted("its pid is not a process id")
    if pid != os.getpid() and pid_alive(pid):
        raise Untrusted(f"process {pid}, which it names, is still running")
    targets = doc.get("targets", [])
    if not isinstance(targets, list) or not all(_in_set(t, folder, commit_name) for t in targets):
        raise Untrusted("a target is not a file of this set in its folder")
    raw = doc.get("entries", [])
    if not isinstance(raw, list):
        raise Untrusted("its entries are not a list")
    entries = [_entry(e, i, pid, folder, commit_name) for i, e in enumerate(raw, 1)]
    return entries, [_name_of(t) for t in targets]


def _entry(raw: Any, i: int, pid: int, folder: Path, commit_name: str) -> Entry:
    if not isinstance(raw, dict) or set(raw) - {*_FIELDS, "folder"} or not set(_FIELDS) <= set(raw):
        raise Untrusted(f"entry {i} is not a save entry")
    for key, types in _FIELDS.items():
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, types):
            raise Untrusted(f"entry {i}: {key} has the wrong type")
        if isinstance(value, int) and value < 0:
            raise Untrusted(f"entry {i}: {key} is negative")
    is_folder = raw.get("folder", False)
    if not isinstance(is_folder, bool):
        raise Untrusted(f"entry {i}: folder has the wrong type")
    if not _in_set(raw["target"], folder, commit_name):
        raise Untrusted(f"entry {i}: its target is not a file of this set in its folder")
    target = _name_of(raw["target"])
    short = short_name(target)
    names = {"temp": raw["temp"], "parked": raw["parked"]}
    for key, value in names.items():
        if value is None:
            continue
        name = _name_of(value) if _in_folder(value, folder) else ""
        m = DEBRIS.match(name)
        kind = "tmp" if key == "temp" else "old"
        ours = m is not None and (m["name"], int(m["pid"]), m["kind"]) == (short, pid, kind)
        if not ours:
            raise Untrusted(f"entry {i}: its {key} is not a name this save could have written")
        if not _owned(folder / name):
            raise Untrusted(f"entry {i}: its {key} belongs to another user")
        names[key] = name
    parked = names["parked"]
    return Entry(
        str(folder / target),
        str(folder / str(names["temp"])),
        raw["dev"],
        raw["ino"],
        None if parked is None else str(folder / parked),
        is_folder,
    )


def _in_set(value: Any, folder: Path, commit_name: str) -> bool:
    if not isinstance(value, str):
        return False
    return _in_folder(value, folder) and of_set(_name_of(value), commit_name)


def _in_folder(value: str, folder: Path) -> bool:
    """A bare name, or (as an earlier tfdiag wrote) an absolute path in the lock's folder."""
    if "\0" in value:
        return False
    if plain_name(value):
        return True
    p = Path(value)
    if not p.is_absolute() or not plain_name(p.name):
        return False
    try:
        return os.path.samefile(p.parent, folder)
    except OSError:
        return False


def _name_of(value: str) -> str:
    return os.path.basename(value)


def _owned(path: Path) -> bool:
    try:
        return not hasattr(os, "getuid") or os.lstat(path).st_uid == os.getuid()
    except FileNotFoundError:
        return True
    except OSError:
        return False


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True
    return True


# -- settling -------------------------------------------------------------------------


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
    if not entries:
        return
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


def remove_debris(folder: Path, names: Iterable[str]) -> None:
    """Temporaries and parked files of these targets (names in ``folder``) left by
    processes no longer alive, that are the user's."""
    wanted = {short_name(n) for n in names}
    if not wanted:
        return
    try:
        listing = os.listdir(folder if str(folder) else ".")
    except OSError:
        return
    for entry in listing:
        m = DEBRIS.match(entry)
        if m and m["name"] in wanted and not pid_alive(int(m["pid"])) and _owned(folder / entry):
            remove(str(folder / entry))


def _same(a: str, b: str) -> bool:
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def remove(path: str) -> None:
    """A file, link or folder, if it is there (a link is removed, never followed). Only
    ever given a path built from checked names: a temporary, parked file or target."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
