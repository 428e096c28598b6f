"""tfdiag's scratch folders (traces, captures, served copies, fix's measured copies) are
named for their process; the next tfdiag process removes those whose process is gone, so
``os._exit`` or ``kill -9`` mid-trace leaves nothing for good."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tfdiag.records.scratch import KINDS, make_scratch, prefix, scratch_path, sweep_stale


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_folders_of_dead_processes_are_swept_and_nothing_else(tmp_path: Path) -> None:
    dead, live = _dead_pid(), os.getppid()
    for kind in KINDS:
        for pid in (dead, live):
            (tmp_path / f"tfdiag-{kind}-{pid}-ab_c1" / "run").mkdir(parents=True)
            (tmp_path / f"tfdiag-{kind}-{pid}-ab_c1" / "run" / "trace.pb").write_bytes(b"x")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "mine.txt").write_text("mine")
    (tmp_path / f"tfdiag-trace-{dead}-link").symlink_to(victim)
    (tmp_path / f"other-{dead}-ab_c1").mkdir()
    (tmp_path / f"tfdiag-notours-{dead}-ab_c1").mkdir()
    (tmp_path / f"tfdiag-trace-{dead}-file").write_text("a file, not a folder")
    gone = sweep_stale(tmp_path)
    assert sorted(gone) == sorted(f"tfdiag-{kind}-{dead}-ab_c1" for kind in KINDS)
    kept = {p.name for p in tmp_path.iterdir()}
    assert kept == {f"tfdiag-{kind}-{live}-ab_c1" for kind in KINDS} | {
        f"tfdiag-trace-{dead}-link",
        "victim",
        f"other-{dead}-ab_c1",
        f"tfdiag-notours-{dead}-ab_c1",
        f"tfdiag-trace-{dead}-file",
    }
    assert (victim / "mine.txt").read_text() == "mine"


def test_a_new_scratch_folder_is_this_processes_and_sweeps_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read TMPDIR
    stale = tmp_path / f"tfdiag-trace-{_dead_pid()}-0a1b2c"
    stale.mkdir()
    path = scratch_path("trace")
    assert not stale.exists() and not path.exists()
    assert path.parent == tmp_path and path.name.startswith(prefix("trace"))
    made = make_scratch("capture")
    assert made.is_dir() and made.name.startswith(f"tfdiag-capture-{os.getpid()}-")
    assert sweep_stale(tmp_path) == []  # its own: alive


@pytest.mark.tf
def test_os_exit_in_a_traced_call_leaves_a_trace_folder_that_the_next_run_removes(
    tmp_path: Path,
) -> None:
    """``os._exit`` mid-call skips every clean-up: the TF profiler's trace folder stayed in
    the temp dir for good (the attack found it after each such exit)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    script = textwrap.dedent(
        """
        import os, sys
        import tensorflow as tf
        import tfdiag

        f = tf.function(lambda x: x * 2.0)
        state = {"n": 0}

        def step():
            state["n"] += 1
            if sys.argv[1] == "exit" and state["n"] > 6:
                os._exit(0)
            return f(tf.constant(1.0))

        report = tfdiag.profile(step, iterations=4)
        left = os.listdir(os.environ["TMPDIR"])
        print("done", sorted(n for n in left if n.startswith("tfdiag-")))
        """
    )
    (tmp_path / "s.py").write_text(script)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TMPDIR": str(tmp)}

    def run(mode: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(tmp_path / "s.py"), mode],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    first = run("exit")
    assert first.returncode == 0 and "done" not in first.stdout, first.stderr[-2000:]
    left = [p.name for p in tmp.iterdir() if p.name.startswith("tfdiag-trace-")]
    assert left, "the exit should have happened inside the traced pass"
    second = run("ok")
    assert second.returncode == 0, second.stderr[-2000:]
    assert second.stdout.strip() == "done []"  # the dead run's folder, and its own, gone
