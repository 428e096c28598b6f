"""Real tf.distribute jobs: two MultiWorkerMirroredStrategy workers (tf_keras) as two
processes on 127.0.0.1, worker 1 slowed by a callback that sleeps after every batch.

Each test starts its own job (tests/distlab.py: free ports, every process killed with its
group when the test ends, however it ends) and stays well under a minute on 2 cores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from distlab import job

pytestmark = pytest.mark.tf

SLOW = {"SLOW_TASK": "1", "SLOW_S": "0.05", "STEPS": "30"}


def test_merge_names_the_worker_slowed_by_a_callback(tmp_path: Path) -> None:
    with job(tmp_path, "callback", env=SLOW) as j:
        j.finish(timeout=120)
    reports = [tmp_path / "w0.tfdiag.json", tmp_path / "w1.tfdiag.json"]
    proc = run_cli("merge", *map(str, reports), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    workers = {w["index"]: w for w in doc["workers"]}
    assert sorted(workers) == [0, 1]
    for w in workers.values():
        assert w["strategy"] == "MultiWorkerMirroredStrategy"
        assert w["num_replicas"] == 2 and w["task"] == f"worker:{w['index']}"
        assert w["steps"] >= 10
        # the in-process TF profiler is off by default in a multi-worker job (it can crash
        # TF 2.21): the wait is estimated from the step functions' times
        assert w["traced_steps"] == 0 and w["collective_s"] is None
        assert not w["wait_measured"]
    # every worker runs at the pace of the slowest; worker 1's cycle holds its 50 ms sleep
    assert workers[1]["split"]["callbacks_s"] > 0.04
    assert workers[0]["split"]["callbacks_s"] < 0.02
    assert workers[0]["wait_s"] > workers[1]["wait_s"] + 0.02
    straggler = next(f for f in doc["findings"] if f["id"] == "straggler")
    assert straggler["slow_workers"] == [1]
    assert straggler["slow_on"] == "callback"
    text = run_cli("merge", *map(str, reports), "--width", "150")
    assert text.returncode == 0 and "straggler" in text.stdout


def _capture_once(tmp_path: Path) -> tuple[str, Any]:
    """One job traced remotely: its addresses and the merged JSON, or None when a worker
    died of TF 2.21's profiler crash (docs/distributed.md) before the trace was read."""
    tmp_path.mkdir()
    env = {**SLOW, "STEPS": "5000"}  # trains until told to stop
    with job(tmp_path, "server", env=env) as j:
        j.wait_for("ready", timeout=90)
        addresses = ",".join(f"grpc://127.0.0.1:{p}" for p in j.prof_ports)
        # servers up, nobody training yet: one line, exit 2, nothing written
        idle = run_cli(
            "capture", addresses, "--duration-ms", "300", "--out", str(tmp_path / "idle")
        )
        assert idle.returncode == 2, idle.stderr
        ours = [line for line in idle.stderr.splitlines() if line.startswith("tfdiag:")]
        assert len(ours) == 1 and "training?" in ours[0], idle.stderr
        assert not list(tmp_path.glob("idle*"))
        (tmp_path / "go").touch()
        j.wait_for("training", timeout=60)
        out = str(tmp_path / "job")
        proc = run_cli(
            "capture", addresses, "--duration-ms", "1500", "--out", out, "--format", "json"
        )
        (tmp_path / "stop").touch()
        try:
            j.finish(timeout=60)
        except AssertionError:
            if j.crashed_in_tensorflow():
                return addresses, None
            raise
    assert proc.returncode == 0, proc.stderr
    return addresses, json.loads(proc.stdout)


def test_capture_traces_the_job_remotely_and_names_the_straggler(tmp_path: Path) -> None:
    # TF 2.21's profiler kills the slowed worker in some capture jobs (2 of 5 measured, two
    # in a row in one fresh-clone run): another job then, up to four; anything but that
    # native crash fails at once
    for attempt in range(4):
        job_dir = tmp_path / f"job{attempt}"
        addresses, doc = _capture_once(job_dir)
        if doc is not None:
            break
    assert doc is not None, "TF's profiler crashed a worker in four jobs running"
    tmp_path = job_dir
    assert [w["index"] for w in doc["workers"]] == [0, 1]
    assert [w["source"] for w in doc["workers"]] == addresses.split(",")
    for w in doc["workers"]:
        assert w["steps"] >= 5 and w["collective_s"] is not None
    straggler = next(f for f in doc["findings"] if f["id"] == "straggler")
    assert straggler["slow_workers"] == [1] and straggler["slow_on"] == "callback"
    saved = sorted(p.name for p in tmp_path.glob("job*"))
    assert saved == [
        "job.tfdiag.json",
        "job.w0.prof",
        "job.w0.tfdiag.json",
        "job.w0.tfprofile",
        "job.w1.prof",
        "job.w1.tfdiag.json",
        "job.w1.tfprofile",
    ]
    again = run_cli("explain", str(tmp_path / "job.w1.tfdiag.json"), "--format", "json")
    assert again.returncode == 0, again.stderr
    worker = json.loads(again.stdout)
    assert worker["distribution"]["address"] == addresses.split(",")[1]
    assert worker["probe_summary"]["op_time"]["collective_s_per_iteration"] > 0
