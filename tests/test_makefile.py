"""``make test`` and ``make test-corpus`` run both halves (the TensorFlow suite and the
``KERAS_BACKEND=jax`` one) and fail after both: a fake interpreter records each run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("target", ["test", "test-corpus"])
def test_both_halves_run_and_make_fails_after_both(target: str, tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    fake = tmp_path / "python"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(os.environ.get('KERAS_BACKEND', '-') + ' ' + ' '.join(sys.argv[1:]) + '\\n')\n"
        "sys.exit(1)\n"
    )
    fake.chmod(0o755)
    done = subprocess.run(
        [
            "make",
            "-s",
            "-C",
            str(ROOT),
            "-o",
            ".venv/.tfdiag-installed",
            "-o",
            "browser",
            target,
            f"PY={fake}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    runs = log.read_text().splitlines()
    assert len(runs) == 2, runs
    assert runs[0].startswith("- -m pytest") and runs[1].startswith("jax -m pytest")
    assert runs[1].endswith("tests/on_jax")
    assert done.returncode != 0
