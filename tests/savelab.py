"""Crash and race trials for saves, in a fresh interpreter that forks one child per trial.

``tests/test_saves.py`` runs it and then inspects the trial folders it leaves::

    python tests/savelab.py steps ROOT       # a child dies before its k-th filesystem step,
                                             # for every k until a save completes
    python tests/savelab.py steps-relative ROOT   # the same, each save given a path relative
                                             # to ROOT (its working folder)
    python tests/savelab.py kills ROOT N     # N children SIGKILLed at a random moment
    python tests/savelab.py race ROOT N      # N trials of two children saving one new path
    python tests/savelab.py readers ROOT N   # N saves of one report while two children read
                                             # it (settle it) in a loop

Each trial is a folder ``ROOT/tNNN``; ``ROOT/ref_old`` and ``ROOT/ref_new`` hold the two
complete sets saved normally. Prints one JSON object: what happened in each trial.
A fresh interpreter (not the pytest process) so no thread of another test is forked.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth import full_set_report  # noqa: E402

from tfdiag.records.errors import InputError  # noqa: E402

#: The filesystem calls a save makes that a crash can fall between.
STEPS = ("open", "fsync", "rename", "replace", "link", "unlink", "remove", "rmdir", "mkdir")
CRASHED = 9
LOST = 3


def _count_steps_and_die_at(k: int) -> None:
    """Make the k-th filesystem call of this process kill it first, as kill -9 would."""
    seen = {"n": 0}
    for name in STEPS:
        real = getattr(os, name)

        def counted(*args: Any, _real: Callable[..., Any] = real, **kwargs: Any) -> Any:
            seen["n"] += 1
            if seen["n"] == k:
                os._exit(CRASHED)
            return _real(*args, **kwargs)

        setattr(os, name, counted)


def _child(body: Callable[[], None]) -> int:
    pid = os.fork()
    if pid == 0:  # the child never returns into the caller
        code = 0
        try:
            body()
        except InputError as exc:
            Path(os.environ["SAVELAB_MESSAGES"], str(os.getpid())).write_text(str(exc))
            code = LOST
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    return pid


def _wait(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _setup(root: Path, n: int, old: Any) -> Path:
    folder = root / f"t{n:03d}"
    folder.mkdir()
    old.save(folder / "run")
    return folder


def steps(root: Path, relative: bool = False) -> list[dict[str, Any]]:
    old, new = full_set_report(first_call_s=0.1), full_set_report(first_call_s=0.9)
    trials = []
    for k in range(1, 1000):
        folder = _setup(root, k, old)

        def body(k: int = k, folder: Path = folder) -> None:
            if relative:
                os.chdir(root)
            _count_steps_and_die_at(k)
            new.save((Path(folder.name) if relative else folder) / "run", overwrite=True)

        code = _wait(_child(body))
        trials.append({"folder": str(folder), "k": k, "exit": code})
        if code != -CRASHED and code != CRASHED:
            break
    return trials


def kills(root: Path, n: int, padding: int) -> list[dict[str, Any]]:
    old = full_set_report(first_call_s=0.1, trace_mb=padding)
    new = full_set_report(first_call_s=0.9, trace_mb=padding)
    probe = root / "probe"
    probe.mkdir()
    new.save(probe / "run")  # its views computed once, here: every child inherits them
    started = time.perf_counter()
    new.save(probe / "run", overwrite=True)
    took = time.perf_counter() - started
    shutil.rmtree(probe)
    rng = random.Random(13)
    trials = []
    for i in range(n):
        folder = _setup(root, i, old)
        ready_r, ready_w = os.pipe()

        def body(folder: Path = folder, ready: int = ready_w) -> None:
            os.write(ready, b"!")  # the kill's clock starts as the save does, not the fork:
            new.save(folder / "run", overwrite=True)  # a loaded machine starts a child late

        pid = _child(body)
        os.close(ready_w)
        os.read(ready_r, 1)
        os.close(ready_r)
        delay = rng.uniform(0, took * 1.3)
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        trials.append({"folder": str(folder), "delay_s": delay, "exit": _wait(pid)})
    return trials


def race(root: Path, n: int) -> list[dict[str, Any]]:
    a, b = full_set_report(first_call_s=0.1), full_set_report(first_call_s=0.9)
    trials = []
    for i in range(n):
        folder = root / f"t{i:03d}"
        folder.mkdir()
        go_r, go_w = os.pipe()
        pids = []
        for report in (a, b):

            def body(report: Any = report, folder: Path = folder, go: int = go_r) -> None:
                os.read(go, 1)
                report.save(folder / "run")

            pids.append(_child(body))
        os.write(go_w, b"gg")  # both start at once
        os.close(go_r)
        os.close(go_w)
        codes = [_wait(pid) for pid in pids]
        messages = {}
        for pid in pids:
            path = Path(os.environ["SAVELAB_MESSAGES"], str(pid))
            if path.exists():
                messages[str(pid)] = path.read_text()
        trials.append(
            {
                "folder": str(folder),
                "exits": codes,
                "first_call_s": [0.1, 0.9],
                "messages": messages,
            }
        )
    return trials


def readers(root: Path, n: int) -> list[dict[str, Any]]:
    from tfdiag.records.files import settle_crashed_save

    folder = root / "t000"
    folder.mkdir()
    report = full_set_report(first_call_s=0.1)
    report.save(folder / "run")
    stop_r, stop_w = os.pipe()

    def poll() -> None:
        os.set_blocking(stop_r, False)
        while True:
            try:
                if os.read(stop_r, 1):
                    return
            except BlockingIOError:
                pass
            settle_crashed_save(folder / "run.tfdiag.json")

    pids = [_child(poll) for _ in range(2)]
    trials = []
    for _ in range(n):
        try:
            report.save(folder / "run", overwrite=True)
            trials.append({"folder": str(folder), "exit": 0})
        except InputError as exc:
            trials.append({"folder": str(folder), "exit": LOST, "message": str(exc)})
    os.write(stop_w, b"ss")
    codes = [_wait(pid) for pid in pids]
    return [*trials, {"folder": str(folder), "readers": codes}]


def main(argv: list[str]) -> None:
    mode, root = argv[0], Path(argv[1])
    messages = root / "messages"
    messages.mkdir()
    os.environ["SAVELAB_MESSAGES"] = str(messages)
    padding = 8 if mode == "kills" else 0
    for name, tag in (("ref_old", 0.1), ("ref_new", 0.9)):
        (root / name).mkdir()
        full_set_report(first_call_s=tag, trace_mb=padding).save(root / name / "run")
    if mode in ("steps", "steps-relative"):
        trials = steps(root, relative=mode == "steps-relative")
    elif mode == "kills":
        trials = kills(root, int(argv[2]), padding)
    elif mode == "readers":
        trials = readers(root, int(argv[2]))
    else:
        trials = race(root, int(argv[2]))
    print(json.dumps({"trials": trials}))


if __name__ == "__main__":
    main(sys.argv[1:])
