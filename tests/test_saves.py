"""Saves under faults: folders in the way, two savers at once, a crash at any point.

The crash and race trials run in ``tests/savelab.py`` (a fresh interpreter that forks one
child per trial); this file checks what each trial left, as a reader and as the next save.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from synth import full_set_report, keras3_predict_report

import tfdiag
from tfdiag.records.errors import InputError
from tfdiag.records.files import check_targets

CRASHED, LOST = 9, 3


def _lab(mode: str, root: Path, *args: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "savelab.py"), mode, str(root), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    trials: list[dict[str, Any]] = json.loads(proc.stdout)["trials"]
    return trials


def _visible(folder: Path) -> dict[str, bytes]:
    """Every file a user sees: not hidden at the top, a folder's files by relative path."""
    out = {}
    for top in folder.iterdir():
        if top.name.startswith("."):
            continue
        paths = [top] if not top.is_dir() else sorted(p for p in top.rglob("*") if p.is_file())
        for p in paths:
            out[str(p.relative_to(folder))] = p.read_bytes()
    return out


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _refs(root: Path) -> dict[float, dict[str, bytes]]:
    return {0.1: _visible(root / "ref_old"), 0.9: _visible(root / "ref_new")}


# -- folders are never replaced ------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["run.tfdiag.json", "run.prof", "run.sampling.html", "run.tfprofile"]
)
def test_overwrite_replaces_files_never_folders(tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    (folder / "mine").mkdir(parents=True)
    (folder / "mine" / "notes.txt").write_text("keep me")
    targets = [tmp_path / n for n in ("run.tfdiag.json", "run.prof", "run.sampling.html")]
    with pytest.raises(InputError, match="is a folder") as early:
        check_targets([*targets, tmp_path / "run.tfprofile"], overwrite=True)
    assert name in str(early.value)
    with pytest.raises(InputError, match="is a folder") as info:
        full_set_report().save(tmp_path / "run", overwrite=True)
    assert name in str(info.value) and "\n" not in str(info.value)
    assert (folder / "mine" / "notes.txt").read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_an_earlier_trace_folder_is_replaced_with_overwrite(tmp_path: Path) -> None:
    full_set_report(first_call_s=0.1).save(tmp_path / "run")
    full_set_report(first_call_s=0.9).save(tmp_path / "run", overwrite=True)
    trace = tmp_path / "run.tfprofile/plugins/profile/run/host.xplane.pb"
    assert trace.read_bytes() == b"trace 0.9"
    assert _hidden(tmp_path) == []


@pytest.mark.parametrize("command", ["run", "explain", "demo", "compare", "bench"])
def test_force_never_deletes_a_folder_from_the_cli(tmp_path: Path, command: str) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "s.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    saved = keras3_predict_report().save(tmp_path / "saved")[0]
    folder = {
        "run": tmp_path / "results",
        "explain": tmp_path / "plot.png",
        "demo": tmp_path / "d.tfdiag.json",
        "compare": tmp_path / "c.tfdiag.json",
        "bench": tmp_path / "b.json",
    }[command]
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    args = {
        "run": ["run", "--out", str(folder), "--force", str(script)],
        "explain": ["explain", str(saved), "--plot", str(folder), "--force"],
        "demo": ["demo", "--save", str(folder), "--force"],
        "compare": ["compare", "--factory", f"{script}:f", "--save", str(folder), "--force"],
        "bench": ["bench", "--quick", "--out", str(tmp_path / "b"), "--force"],
    }[command]
    proc = run_cli(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "is a folder" in lines[0], proc.stderr
    assert (folder / "keep.txt").read_text() == "mine"
    assert not marker.exists()


# -- two savers at once -----------------------------------------------------------------


def test_two_savers_of_one_new_path_exactly_one_wins(tmp_path: Path) -> None:
    trials = _lab("race", tmp_path, "40")
    refs = _refs(tmp_path)
    assert len(trials) == 40
    for t in trials:
        assert sorted(t["exits"]) == [0, LOST], t
        winner = t["first_call_s"][t["exits"].index(0)]
        (message,) = t["messages"].values()
        assert "\n" not in message and ("exists" in message or "saving" in message), message
        folder = Path(t["folder"])
        assert tfdiag.load_report(folder / "run.tfdiag.json").timing.first_call_s == winner
        assert _visible(folder) == refs[winner]
        assert _hidden(folder) == []


# -- a crash at any point -----------------------------------------------------------------


def test_a_crash_before_any_filesystem_step_leaves_one_complete_set(tmp_path: Path) -> None:
    trials = _lab("steps", tmp_path)
    refs = _refs(tmp_path)
    assert len(trials) > 20 and trials[-1]["exit"] == 0, trials[-1]
    seen = set()
    for t in trials[:-1]:
        assert t["exit"] == CRASHED, t
        folder = Path(t["folder"])
        report = tfdiag.load_report(folder / "run.tfdiag.json")  # a reader after the crash
        seen.add(report.timing.first_call_s)
        assert _visible(folder) == refs[report.timing.first_call_s], t
        assert _hidden(folder) == [], t
    assert seen == {0.1, 0.9}  # crashes both before and after the switch


def test_kill_9_at_random_moments_then_the_next_save_clears_the_debris(tmp_path: Path) -> None:
    trials = _lab("kills", tmp_path, "30")
    refs = _refs(tmp_path)
    debris = 0
    for i, t in enumerate(trials):
        folder = Path(t["folder"])
        debris += bool(_hidden(folder))
        if i % 2:  # the next save of the stem, with no reader before it
            keras3_predict_report(first_call_s=0.5).save(folder / "run", overwrite=True)
            assert _hidden(folder) == [], t
            assert tfdiag.load_report(folder / "run.tfdiag.json").timing.first_call_s == 0.5
        else:
            report = tfdiag.load_report(folder / "run.tfdiag.json")
            assert _visible(folder) == refs[report.timing.first_call_s], t
            assert _hidden(folder) == [], t
    assert debris >= 5  # the kills did land mid-save


def test_a_full_disk_while_moving_the_old_set_aside_names_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = full_set_report(first_call_s=0.1).save(tmp_path / "run")
    before = _visible(tmp_path)
    victim = tmp_path / "run.prof"
    for name in ("rename", "replace", "link"):
        real = getattr(os, name)

        def failing(src: Any, dst: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if Path(src) == victim:
                raise OSError(28, "No space left on device")
            return _real(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, name, failing)
    with pytest.raises(InputError, match="No space left on device") as info:
        full_set_report(first_call_s=0.9).save(tmp_path / "run", overwrite=True)
    monkeypatch.undo()
    message = str(info.value)
    assert str(victim) in message
    assert all(str(p) not in message for p in written if p != victim), message
    assert _visible(tmp_path) == before
    assert _hidden(tmp_path) == []


def test_a_file_that_appears_at_a_new_target_mid_save_is_never_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The final name is taken with link(), which fails if anything took it meanwhile: the
    other writer's file stays, and the companions already placed are taken back."""
    target = tmp_path / "run.tfdiag.json"
    real_link = os.link

    def another_writer_first(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(dst) == target:
            target.write_text("someone else's")
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", another_writer_first)
    with pytest.raises(InputError, match="exists"):
        full_set_report().save(tmp_path / "run")
    monkeypatch.undo()
    assert target.read_text() == "someone else's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.tfdiag.json"]
