"""Options a user can get wrong: every count bounded, no empty value taken as "all" or
"nothing", a factory that exits, Ctrl-C bursts (docs/hardening.md, "Calls" and "Options")."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from synth import keras3_predict_report


def _one_line_exit_2(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.fixture()
def saved(tmp_path: Path) -> Path:
    return keras3_predict_report().save(tmp_path / "run")[0]


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "{saved}", "--width", "1000000000"],
        ["explain", "{saved}", "--width", "1"],
        ["compare", "--factory", "f.py:f", "--repeats", str(10**12)],
        ["compare", "--factory", "f.py:f", "--warmup", str(10**9)],
        ["compare", "--factory", "f.py:f", "--batch-size", str(10**12)],
        ["demo", "--iterations", str(10**9)],
        ["run", "--iterations", str(10**9), "s.py"],
        ["bench", "--repeats", str(10**12)],
        ["bench", "--iterations", str(10**12)],
        ["bench", "--warmup", str(10**12)],
    ],
)
def test_every_count_option_is_bounded(saved: Path, args: list[str]) -> None:
    line = _one_line_exit_2(run_cli(*(a.format(saved=saved) for a in args), timeout=60))
    assert "must be at most" in line or "must be at least" in line


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["demo", "--save", ""], "--save"),
        (["compare", "--factory", "f.py:f", "--save", ""], "--save"),
        (["compare", "--factory", "f.py:f", "--methods", ""], "--methods"),
        (["compare", "--factory", "f.py:f", "--methods", " , "], "--methods"),
        (["compare", "--factory", "f.py:f", "--baseline", ""], "--baseline"),
        (["run", "--out", "", "s.py"], "--out"),
        (["bench", "--quick", "--out", ""], "--out"),
        (["explain", "{saved}", "--plot", ""], "--plot"),
        (["explain", "{saved}", "--rules", ""], "--rules"),
    ],
)
def test_an_empty_value_is_refused_not_taken_as_all_or_none(
    saved: Path, args: list[str], option: str
) -> None:
    line = _one_line_exit_2(run_cli(*(a.format(saved=saved) for a in args), timeout=60))
    assert option in line and "empty" in line


def test_a_factory_that_exits_at_import_is_one_line(tmp_path: Path) -> None:
    factory = tmp_path / "f.py"
    factory.write_text("import sys\nsys.exit(4)\ndef f():\n    pass\n")
    line = _one_line_exit_2(run_cli("compare", "--factory", f"{factory}:f", timeout=120))
    assert "sys.exit(4)" in line and str(factory) in line


def test_a_factory_that_exits_when_called_is_one_line(tmp_path: Path) -> None:
    factory = tmp_path / "f.py"
    factory.write_text("import sys\ndef f():\n    sys.exit('no data')\n")
    line = _one_line_exit_2(run_cli("compare", "--factory", f"{factory}:f", timeout=120))
    assert "f() called sys.exit('no data')" in line


BURSTS = """
import json, os, signal, threading, time, traceback
import tfdiag

outcomes = {"interrupted with a report": 0, "interrupted before any": 0, "bare": 0, "done": 0}

def burst(running, done):
    running.set()
    try:
        for _ in range(6):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.0003)
    finally:
        done.set()

def attempt(step):
    try:
        tfdiag.profile(step, iterations=6)
        return "done"
    except tfdiag.Interrupted as exc:
        return "interrupted with a report" if exc.report else "interrupted before any"

for trial in range(TRIALS):
    calls = {"n": 0}
    fire_at = 2 + trial % 9
    running, done = threading.Event(), threading.Event()

    def step():
        calls["n"] += 1
        if calls["n"] == fire_at:
            threading.Thread(target=burst, args=(running, done)).start()
        return sum(range(3000))

    outcome = caught = None
    try:
        outcome = attempt(step)
    except KeyboardInterrupt as exc:
        caught = exc
    while True:  # the rest of the burst lands here, not in the harness or the next trial
        try:
            # A press can land in start() before or after the thread is launched: one that
            # was launched runs (running) within a moment and is waited for to its end.
            if calls["n"] >= fire_at and (running.is_set() or running.wait(2.0)):
                done.wait()
            time.sleep(0.005)
            break
        except KeyboardInterrupt:
            continue
    if caught is not None:
        files = [f.filename for f in traceback.extract_tb(caught.__traceback__)]
        if any("/tfdiag/" in f for f in files):  # tfdiag let a bare one out
            outcome = "bare"
    if outcome is not None:
        outcomes[outcome] += 1
print(json.dumps(outcomes))
"""


def default_sigint() -> None:
    """Ctrl-C as a terminal delivers it: a job started in the background by a
    non-interactive shell (a CI runner's) inherits SIGINT ignored, and Python then never
    raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_burst_of_ctrl_c_keeps_the_partial_report() -> None:
    trials = 150
    code = "\n".join(
        ["import sys", f"sys.path.insert(0, {str(ROOT)!r})", BURSTS.replace("TRIALS", str(trials))]
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        preexec_fn=default_sigint,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcomes = json.loads(proc.stdout.strip().splitlines()[-1])
    assert outcomes["bare"] == 0, outcomes
    assert outcomes["interrupted with a report"] >= trials * 0.8, outcomes
