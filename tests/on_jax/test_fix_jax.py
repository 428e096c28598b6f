"""``tfdiag fix`` on Keras-on-JAX programs (real JAX, tiny models): the JAX findings'
remedy keys (``per-call-input-pipeline:jax:predict``, ``…:jax:fit``) get the same edits as
on TensorFlow, measured with both versions run on JAX."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tfdiag.fix.edits import kind_for

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "fix"
pytestmark = pytest.mark.jax


def _fix(tmp_path: Path, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    shutil.copy(DATA / name, tmp_path / name)
    proc = subprocess.run(
        [sys.executable, "-m", "tfdiag", "fix", "--runs", "1", "--format", "json", name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "KERAS_BACKEND": "jax"},
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["proposals"], doc
    return doc, doc["proposals"][0]


def test_the_jax_keys_have_the_tensorflow_edits() -> None:
    predict = kind_for("per-call-input-pipeline:jax:predict")
    fit = kind_for("per-call-input-pipeline:jax:fit")
    assert predict is not None and predict.name == "predict-on-batch"
    assert fit is not None and fit.name == "one-fit"


def test_predict_per_batch_on_jax_becomes_predict_on_batch(tmp_path: Path) -> None:
    _, p = _fix(tmp_path, "predict_per_batch.py")
    assert p["remedy"] == "per-call-input-pipeline:jax:predict" and p["kind"] == "predict-on-batch"
    v = p["verified"]
    assert p["offered"] and v["scope"] == "per call" and v["ratio"] > 2, v
    assert v["outputs"] == "outputs match"
    print(v["figures"])


def test_a_loop_of_one_epoch_fits_on_jax_becomes_one_fit(tmp_path: Path) -> None:
    _, p = _fix(tmp_path, "fit_per_epoch.py")
    assert p["remedy"] == "per-call-input-pipeline:jax:fit" and p["kind"] == "one-fit"
    v = p["verified"]
    assert v["scope"] == "script" and v["outputs"] == "outputs match", v
    assert "+model.fit(x, y, batch_size=16, epochs=50, verbose=0)" in p["patch"]
    print(v["figures"])


def test_a_static_step_size_of_a_jitted_step_is_made_an_array(tmp_path: Path) -> None:
    """The user's own ``jax.jit`` step (no Keras call site): ``tfdiag run`` names its
    recompiles, and ``tfdiag fix`` takes the argument out of ``static_argnums``, judged
    on the script's time, the printed result the same."""
    doc, p = _fix(tmp_path, "jit_static_step.py")
    assert p["remedy"] == "per-iteration-tracing:jax:static" and p["kind"] == "jit-static", p
    assert '+@jax.jit  # the step size as "plain Python"' in p["patch"], p["patch"]
    v = p["verified"]
    assert p["offered"] and v["scope"] == "script" and v["ratio"] > 2, v
    assert v["outputs"] == "outputs match"
    assert kind_for("per-iteration-tracing:jax:static").name == "jit-static"


def test_an_eager_jax_step_of_the_script_gets_jax_jit_verified(tmp_path: Path) -> None:
    """Keras on JAX trained by the user's own step, not jitted (stateless_call and
    jax.grad op by op every step): ``@jax.jit`` on it, judged on the script's time."""
    doc, _ = _fix(tmp_path, "eager_jax_step.py")
    jits = [p for p in doc["proposals"] if p["kind"] == "jax-jit" and p.get("patch")]
    (p,) = [p for p in jits if "+@jax.jit\n def train_step(" in p["patch"]] or [jits]
    assert p["remedy"].startswith("eager:jit"), p
    v = p["verified"]
    assert p["offered"] and v["scope"] == "script" and v["ratio"] > 1.2, v
    assert v["outputs"] == "outputs match"
    # the line inside the step's list comprehension is the step's (it was `<listcomp>`'s,
    # "the finding names no function of yours to compile"): the same edit, proposed once
    assert not any("names no function" in (q["reason"] or "") for q in doc["proposals"]), doc
