"""Shared fixtures. Real-TensorFlow fixtures are session-scoped: TF is imported once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m tfdiag ARGS`` in a subprocess, as a user runs it."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "tfdiag", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=timeout,
    )


def run_cli_without_tensorflow(*args: str) -> subprocess.CompletedProcess[str]:
    """``tfdiag ARGS`` in a process where importing tensorflow, keras or tf_keras fails,
    as on a machine without them."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('tensorflow', 'keras', 'tf_keras'):\n"
        "            raise ImportError('no tensorflow here')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from tfdiag.frontends.cli import main\n"
        f"raise SystemExit(main({list(args)!r}))\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)


@pytest.fixture(scope="session")
def tiny_data() -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype("float32")
    y = rng.integers(0, 2, (32, 1)).astype("float32")
    return x, y


@pytest.fixture(scope="session")
def tiny_model_factory() -> Callable[[str], Any]:
    """``factory(flavour)`` → a compiled seed-003 Dense 4→2→1 model (a new one per call)."""
    from tfdiag.measure.seed_models import tiny_model

    return tiny_model


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/on_jax/ needs Keras on JAX, which a process picks once: `make test` runs it in a
    second process with KERAS_BACKEND=jax, and every other run leaves it out."""
    jax_dir = ROOT / "tests" / "on_jax"
    inside = collection_path == jax_dir or jax_dir in collection_path.parents
    if inside and os.environ.get("KERAS_BACKEND") != "jax":
        return True
    return None
