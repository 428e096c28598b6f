"""A saved ``tfdiag fix`` result end to end on a tiny program: ``tfdiag fix --out`` saves
the run report with the measured patch in it, ``explain`` shows it, and ``tfdiag diff`` of
it and a ``tfdiag run`` of the patched program says the patch's effect on its line. One
run of each version (``--runs 1``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

DATA = ROOT / "tests" / "data" / "fix"
pytestmark = pytest.mark.tf
NAME = "predict_per_batch.py"


def _tfdiag(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfdiag", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )


def test_a_saved_fix_result_explains_and_diffs_against_the_patched_run(tmp_path: Path) -> None:
    shutil.copy(DATA / NAME, tmp_path / NAME)
    fix = _tfdiag(tmp_path, "fix", "--runs", "1", "--apply", "--out", "fix.tfdiag.json", NAME)
    assert fix.returncode == 0, fix.stderr
    assert "saved " in fix.stderr and (tmp_path / f"{NAME}.orig").is_file()
    doc = json.loads((tmp_path / "fix.tfdiag.json").read_text(encoding="utf-8"))
    (finding,) = [f for f in doc["findings"] if f.get("patch")]
    assert finding["id"] == "per-call-input-pipeline"
    assert "+    y = model.predict_on_batch(x[i : i + 8])" in finding["patch"]
    assert finding["verified"]["ok"] and finding["verified"]["ratio"] > 2, finding["verified"]
    assert finding["verified"]["scope"] == "per call"
    assert all(f["patch"] or f["patch_reason"] for f in doc["findings"])

    explained = _tfdiag(tmp_path, "explain", "--width", "150", "fix.tfdiag.json")
    assert explained.returncode == 0, explained.stderr
    assert f"patch line 11: {finding['verified']['figures']}" in explained.stdout

    after = _tfdiag(tmp_path, "run", "--no-tf-profiler", "--out", "after.tfdiag.json", NAME)
    assert after.returncode == 0, after.stderr  # the patched program, as --apply wrote it
    diff = _tfdiag(tmp_path, "diff", "--format", "json", "fix.tfdiag.json", "after.tfdiag.json")
    assert diff.returncode == 0, diff.stderr
    (effect,) = json.loads(diff.stdout)["patches"]
    assert effect["site"] == f"{NAME}:11" and effect["scope"] == "per call"
    assert effect["resolved"] and effect["applied"], effect
    assert effect["speedup"] > 2, effect
    text = _tfdiag(tmp_path, "diff", "--width", "150", "fix.tfdiag.json", "after.tfdiag.json")
    assert "per-call-input-pipeline resolved" in text.stdout
