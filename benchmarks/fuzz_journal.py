"""Crafted save locks and journals beside a report, for ``benchmarks/fuzz.py --journals N``.

Each mutant is a folder ``jNNNN/`` holding a copy of a saved report set (``reports/``), files
outside it that a hostile journal would aim at (``outside/victim/``, ``outside/bashrc``), and
a ``.profile.tfdiag.json.lock`` beside the report: a journal of tfdiag's own shape with one or
two fields replaced (a path outside the folder, ``..``, ``.``, an absolute path, a symlink, a
NUL, a wrong type, a live pid...), a document that is no journal, or a lock that is a link,
a hard link, a folder or a FIFO. A worker runs ``tfdiag explain`` on the report from inside
``reports/`` (where ``.`` does the most harm) and then saves the report over itself; the
outcome is the usual one, or **acted outside** when anything outside the report's own set
changed, or the set's files changed under the reader.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

LOCK = ".profile.tfdiag.json.lock"
REPORT = "profile.tfdiag.json"


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _base(pid: int) -> dict[str, Any]:
    def entry(target: str, kind: str = "tmp") -> dict[str, Any]:
        return {
            "target": target,
            "temp": f".{target}.{pid}.0123abcd.{kind}",
            "dev": 1,
            "ino": 2,
            "parked": f".{target}.{pid}.4567cdef.old",
            "folder": False,
        }

    return {
        "pid": pid,
        "targets": [REPORT, "profile.prof"],
        "entries": [entry("profile.prof"), entry(REPORT)],
    }


def _path_value(rng: random.Random, folder: Path, hostile: list[str]) -> Any:
    outside = folder / "outside"
    return rng.choice(
        [
            str(outside / "victim"),
            str(outside / "bashrc"),
            "../outside/victim",
            "../outside/bashrc",
            "..",
            ".",
            str(folder),  # never "/": a regression must not be able to reach the machine
            "",
            str(folder / "reports"),
            str(folder / "reports" / REPORT),
            "reports/../../outside/victim",
            "a/b",
            "profile.prof\0x",
            "\0",
            rng.choice(hostile),
            5,
            None,
            [],
            {},
            True,
            -1,
            2**64,
            1e308,
        ]
    )


def make(rng: random.Random, folder: Path, seed_set: Path, hostile: list[str], pid: int) -> str:
    """Write one mutant into ``folder``; returns what was done to the journal."""
    reports = folder / "reports"
    shutil.copytree(seed_set, reports)
    victim = folder / "outside" / "victim"
    victim.mkdir(parents=True)
    (victim / "precious.txt").write_text("mine")
    (folder / "outside" / "bashrc").write_text("export SAFE=1\n")
    lock = reports / LOCK
    doc: Any = _base(pid)
    r = rng.random()
    if r < 0.1:  # the lock itself is something else
        kind = rng.choice(["symlink", "dangling", "hardlink", "folder", "fifo"])
        if kind == "symlink":
            lock.symlink_to(folder / "outside" / "bashrc")
        elif kind == "dangling":
            lock.symlink_to(folder / "outside" / "created-by-a-reader")
        elif kind == "hardlink":
            os.link(folder / "outside" / "bashrc", lock)
        elif kind == "folder":
            lock.mkdir()
        else:
            os.mkfifo(lock)
        return f"lock is a {kind}"
    if r < 0.2:  # a debris-named temporary that is a link out of the folder
        name = f".profile.prof.{pid}.0123abcd.tmp"
        (reports / name).symlink_to(victim)
        doc["entries"][0]["folder"] = rng.random() < 0.5
        what = "a temporary that is a symlink out"
    elif r < 0.3:  # a debris-named folder holding a link out
        name = f".profile.prof.{pid}.0123abcd.tmp"
        (reports / name).mkdir()
        (reports / name / "link").symlink_to(victim)
        doc["entries"][0]["folder"] = True
        what = "a temporary folder holding a symlink out"
    elif r < 0.6:  # a path field
        entry = rng.choice(doc["entries"])
        key = rng.choice(["target", "temp", "parked"])
        entry[key] = _path_value(rng, folder, hostile)
        what = f"{key} = {entry[key]!r}"[:80]
    elif r < 0.7:
        doc["pid"] = rng.choice([0, -1, "123", True, None, os.getpid(), 1, 2**40, os.getppid()])
        what = f"pid = {doc['pid']!r}"
    elif r < 0.8:
        key = rng.choice(["targets", "entries"])
        doc[key] = rng.choice(
            [5, "x", {}, None, [5], [None], [{}], [[]], [{"target": REPORT}], [REPORT] * 1000]
        )
        what = f"{key} replaced"
    elif r < 0.87:
        entry = rng.choice(doc["entries"])
        key = rng.choice(list(entry))
        if rng.random() < 0.5:
            del entry[key]
        else:
            entry[key] = rng.choice([-1, 2**70, "1", None, 1.5, True, [], "x" * 10_000])
        entry["extra" if rng.random() < 0.2 else key] = entry.get(key, 1)
        what = f"entry field {key}"
    else:  # no journal at all
        raw = rng.choice(
            [
                b"",
                b"[1, 2]",
                b'"x"',
                b"{",
                b"\xff\xfe",
                b"NaN",
                b"[" * 5000 + b"]" * 5000,
                json.dumps({"pid": pid, "entries": [{}] * 50_000}).encode(),
                b"{" + b'"a": 1, ' * 300_000 + b'"pid": 1}',
            ]
        )
        lock.write_bytes(raw)
        return f"not a journal ({len(raw)} bytes)"
    lock.write_text(json.dumps(doc))
    return what


def _digest(root: Path, skip: str = "") -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if skip and (rel == skip or rel.startswith(".")):
            continue
        kind = "l" if p.is_symlink() else "d" if p.is_dir() else "f"
        h.update(f"{rel}\0{kind}\0".encode())
        if kind == "f" and not p.is_fifo():
            h.update(p.read_bytes())
    return h.hexdigest()


def run(folder: Path, explain: Any) -> tuple[str, str]:
    """``(outcome, detail)`` of reading then saving the report beside the mutant's lock.
    ``explain(args)`` is fuzz.py's runner of one CLI call."""
    reports, outside = folder / "reports", folder / "outside"
    before_outside, before_set = _digest(outside), _digest(reports, skip=LOCK)
    os.chdir(reports)
    outcome, detail = explain(["explain", REPORT, "--format", "json"])
    if _digest(outside) != before_outside or _digest(reports, skip=LOCK) != before_set:
        return "acted outside", f"explain: {detail}"
    import tfdiag
    from tfdiag.records.errors import InputError

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):  # the one-line warning, if any
            tfdiag.load_report(REPORT).save(REPORT, overwrite=True)
    except InputError as exc:
        saved = "clear error" if "\n" not in str(exc) else "internal error"
        detail = detail or str(exc)[:200]
    except Exception as exc:  # what this looks for
        return "internal error", f"save: {type(exc).__name__}: {exc}"[:300]
    else:
        saved = "ok"
    if _digest(outside) != before_outside:
        return "acted outside", f"save: {detail}"
    return (outcome if outcome != "ok" else saved), detail


def tasks(
    rng: random.Random, folder: Path, report: Path, n: int, hostile: list[str]
) -> list[tuple[str, str, list[str]]]:
    """``n`` mutants under ``folder``, each a copy of ``report``'s JSON and ``.prof``."""
    seed_set = folder / "journal-seed"
    seed_set.mkdir()
    for name in (REPORT, "profile.prof"):
        shutil.copy(report.with_name(name), seed_set / name)
    pid = dead_pid()
    out = []
    for i in range(n):
        where = folder / f"j{i:04d}"
        what = make(rng, where, seed_set, hostile, pid)
        out.append((f"journal #{i} ({what})", str(where), []))
    return out
