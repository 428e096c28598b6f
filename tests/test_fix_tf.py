"""``tfdiag fix`` end to end on tiny programs: diagnosed, patched, both versions run and
timed, ``--apply`` writing the file that was measured. One run of each version
(``--runs 1``) keeps each test to a few program starts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

DATA = ROOT / "tests" / "data" / "fix"
pytestmark = pytest.mark.tf


def _fix(tmp_path: Path, name: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    shutil.copy(DATA / name, tmp_path / name)
    proc = subprocess.run(
        [sys.executable, "-m", "tfdiag", "fix", "--runs", "1", "--format", "json", *extra, name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    doc = None
    if proc.returncode == 0:
        # with --apply the diff follows the JSON document
        doc, _ = json.JSONDecoder().raw_decode(proc.stdout)
    return proc, doc


def _offered(doc: Any, kind: str) -> dict[str, Any]:
    found = [p for p in doc["proposals"] if p["kind"] == kind]
    assert found, doc["proposals"]
    p = found[0]
    assert p["offered"], p
    return p


def _applied(tmp_path: Path, name: str, proc: subprocess.CompletedProcess[str]) -> str:
    """The written file: it compiles, its backup is the original, and stdout has its diff."""
    text = (tmp_path / name).read_text()
    compile(text, name, "exec")
    assert (tmp_path / f"{name}.orig").read_text() == (DATA / name).read_text()
    assert f"diff --git a/{name} b/{name}" in proc.stdout
    return text


def test_predict_per_batch_is_patched_verified_and_applied(tmp_path: Path) -> None:
    proc, doc = _fix(tmp_path, "predict_per_batch.py", "--apply")
    assert proc.returncode == 0, proc.stderr
    p = _offered(doc, "predict-on-batch")
    v = p["verified"]
    assert v["scope"] == "per call" and v["ratio"] > 2, v  # predict builds a pipeline per call
    assert v["outputs"] == "outputs match"
    assert "+    y = model.predict_on_batch(x[i : i + 8])  # one batch at a time" in p["patch"]
    text = _applied(tmp_path, "predict_per_batch.py", proc)
    assert "predict_on_batch" in text
    run = subprocess.run(
        [sys.executable, "predict_per_batch.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0 and run.stdout.startswith("total "), run.stderr


def test_a_lookup_built_per_call_is_hoisted_and_faster(tmp_path: Path) -> None:
    proc, doc = _fix(tmp_path, "lookup_per_call.py", "--apply")
    assert proc.returncode == 0, proc.stderr
    p = _offered(doc, "hoist")
    assert p["verified"]["scope"] == "script" and p["verified"]["ratio"] >= 1.5
    assert p["verified"]["outputs"] == "outputs match"
    text = _applied(tmp_path, "lookup_per_call.py", proc)
    assert "lookup = keras.layers.StringLookup(vocabulary=VOCAB)\n\n\ndef encode" in text


def test_run_eagerly_is_removed_verified_and_applied(tmp_path: Path) -> None:
    proc, doc = _fix(tmp_path, "run_eagerly_left_on.py", "--apply")
    assert proc.returncode == 0, proc.stderr
    p = _offered(doc, "remove-switch")
    assert p["verified"]["ratio"] > 1.5 and p["verified"]["outputs"] == "outputs match"
    assert '+model.compile("sgd", "mse")\n' in p["patch"], p["patch"]
    # --apply writes the fastest verified patch of the file (another finding's may win)
    offered = [q for q in doc["proposals"] if q["offered"]]
    best = max(offered, key=lambda q: q["verified"]["ratio"])
    text = _applied(tmp_path, "run_eagerly_left_on.py", proc)
    assert text != (DATA / "run_eagerly_left_on.py").read_text()
    if best is p:
        assert 'model.compile("sgd", "mse")\n' in text
    print([(q["kind"], q["verified"]["figures"]) for q in offered])


def test_a_python_scalar_to_a_retracing_function_becomes_a_tensor(tmp_path: Path) -> None:
    proc, doc = _fix(tmp_path, "retrace_scalar.py", "--apply")
    assert proc.returncode == 0, proc.stderr
    p = _offered(doc, "tf-constant")
    v = p["verified"]
    # one trace per call against one graph for all: the calls' own times, one run each
    assert v["scope"] == "per call" and v["ratio"] > 3, v
    assert v["outputs"] == "outputs match"
    assert p["location"] == "retrace_scalar.py:14", p  # the call, not autograph's copy
    assert "+    total += float(step(x, tf.constant(i / 10)))  # a new Python float" in p["patch"]
    text = _applied(tmp_path, "retrace_scalar.py", proc)
    assert "step(x, tf.constant(i / 10))" in text


def test_a_dataset_chain_gets_parallel_maps_and_a_prefetch(tmp_path: Path) -> None:
    """`input-bound` needs the TF profiler's input wait, which `tfdiag fix`'s own run does
    not attach: the program is diagnosed by `tfdiag run` and fixed from its report."""
    name = "slow_map_fit.py"
    shutil.copy(DATA / name, tmp_path / name)
    run = subprocess.run(
        [sys.executable, "-m", "tfdiag", "run", "--out", "run.tfdiag.json", name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "tfdiag", "fix", "--runs", "1", "--format", "json", "--apply"]
        + ["--report", "run.tfdiag.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    doc, _ = json.JSONDecoder().raw_decode(proc.stdout)
    found = [p for p in doc["proposals"] if p["kind"] == "tune-pipeline"]
    assert found, doc["proposals"]
    v = found[0]["verified"]
    # the one fit call, timed in both versions; the patched program runs and agrees
    assert v["scope"] == "per call" and v["outputs"] == "outputs match", v
    assert "num_parallel_calls=tf.data.AUTOTUNE).batch(32).prefetch(" in found[0]["patch"]
    # Its gain on the shared 2-core machine is not steady (1.9x, 1.8x, 4.3x, 0.8x, 0.9x, 0.2x in six
    # measurements under load): the file is written exactly when it verified.
    if found[0]["offered"]:
        text = _applied(tmp_path, name, proc)
        assert ".map(augment, num_parallel_calls=tf.data.AUTOTUNE).batch(32)" in text
    else:
        assert (tmp_path / name).read_text() == (DATA / name).read_text()
        assert not (tmp_path / f"{name}.orig").exists()
    print(v["figures"])


def test_a_loop_of_one_epoch_fits_becomes_one_fit_judged_on_the_script(tmp_path: Path) -> None:
    name = "fit_per_epoch.py"
    proc, doc = _fix(tmp_path, name, "--apply")
    assert proc.returncode == 0, proc.stderr
    found = [p for p in doc["proposals"] if p["kind"] == "one-fit"]
    assert found, doc["proposals"]
    p, v = found[0], found[0]["verified"]
    # one fit of 50 epochs against 50 calls: the script's time, not the (longer) call's;
    # shuffling draws the same order, so the printed loss agrees
    assert v["scope"] == "script" and v["outputs"] == "outputs match", v
    assert "+model.fit(x, y, batch_size=16, epochs=50, verbose=0)  # one epoch" in p["patch"]
    # Keras 3 re-creates the epoch iterator on every epoch of one fit too: the gain is the
    # per-call set-up only (1.6x under load here), and the file is written exactly when it
    # verified
    if p["offered"]:
        text = _applied(tmp_path, name, proc)
        assert "for _epoch" not in text
    else:
        assert (tmp_path / name).read_text() == (DATA / name).read_text()
    print(v["figures"])


def test_a_healthy_program_has_nothing_to_fix(tmp_path: Path) -> None:
    shutil.copy(DATA / "healthy.py", tmp_path / "healthy.py")
    proc = subprocess.run(
        [sys.executable, "-m", "tfdiag", "fix", "--apply", "healthy.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "nothing to fix" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["healthy.py"]


def test_a_script_that_fails_as_written_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import keras\nraise SystemExit(3)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "tfdiag", "fix", "broken.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "tfdiag: error: broken.py fails as written (exit 3): nothing is patched"
    )
