"""Smoke tests: every example runs, at tiny sizes, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

EXAMPLES = ROOT / "examples"


def run_example(name: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "COLUMNS": "120", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or ROOT,
        timeout=300,
    )


@pytest.mark.tf
def test_predict_example(tmp_path: Path) -> None:
    proc = run_example("predict.py", "--iterations", "3", "--save", str(tmp_path / "p"))
    assert proc.returncode == 0, proc.stderr
    assert "tfdiag · Sequential.predict" in proc.stdout
    assert "per-call-input-pipeline" in proc.stdout.splitlines()[-1]
    assert (tmp_path / "p.tfdiag.json").exists()


@pytest.mark.tf
def test_train_on_batch_example() -> None:
    proc = run_example("train_on_batch.py", "--iterations", "3", "--flavour", "tf_keras")
    assert proc.returncode == 0, proc.stderr
    assert "tfdiag · Sequential.train_on_batch" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("findings: ")


@pytest.mark.tf
def test_fit_callback_example() -> None:
    proc = run_example("fit_callback.py", "--steps", "8", "--epochs", "1", "--batches", "3", "6")
    assert proc.returncode == 0, proc.stderr
    assert "tfdiag · Sequential.fit" in proc.stdout and "batches=3–6" in proc.stdout


@pytest.mark.tf
def test_compare_example() -> None:
    proc = run_example("compare.py", "--rows", "8")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.tf
def test_notebook_runs_through_ipython() -> None:
    import nbformat
    from IPython.core.interactiveshell import InteractiveShell

    nb = nbformat.read(EXAMPLES / "notebook.ipynb", as_version=4)
    nbformat.validate(nb)
    shell = InteractiveShell.instance()
    ran = 0
    for cell in nb.cells:
        if cell.cell_type == "code":
            result = shell.run_cell(cell.source)
            assert result.success, (cell.source, result.error_in_exec)
            ran += 1
    assert ran >= 5
    assert "%load_ext tfdiag" in [c.source for c in nb.cells]
    report, loop = shell.user_ns["report"], shell.user_ns["loop"]
    assert report.call.label == "Sequential.predict"
    # -n 5: 5 plain timed iterations (after the TF profiler's traced ones); 3 profiled
    assert len(report.timing.plain_s) == 5 and report.timing.iterations == 3
    assert loop.call.method == "predict_on_batch"
    for name in ("report", "loop", "model", "x", "batches"):
        shell.user_ns.pop(name, None)
