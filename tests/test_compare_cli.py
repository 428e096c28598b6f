"""``python -m tfdiag compare`` and ``bench`` through a subprocess, as a user runs them."""

from __future__ import annotations

import csv
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, run_cli

TINY_FACTORY = """
from tfdiag.measure.seed_models import tiny_model
import numpy as np

def tiny(flavour="keras3"):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype("float32")
    y = rng.integers(0, 2, (32, 1)).astype("float32")
    return tiny_model(flavour), x, y

def not_a_model():
    return "a string", np.zeros((4, 4), "float32"), None

def explodes():
    raise RuntimeError("cannot reach the data server")
"""


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.strip().splitlines() if line.startswith("tfdiag:")]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture()
def factory(tmp_path: Path) -> Path:
    path = tmp_path / "factories.py"
    path.write_text(TINY_FACTORY)
    return path


def test_list_methods() -> None:
    proc = run_cli("compare", "--list-methods")
    assert proc.returncode == 0, proc.stderr
    for name in ("predict_on_batch", "tf.function(jit)", "uncompiled predict", "eager step"):
        assert name in proc.stdout
    narrow = run_cli("compare", "--list-methods", "--width", "60")
    assert narrow.returncode == 0, narrow.stderr
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60
    assert "tf.function(jit)" in narrow.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--model", "m.keras"), "--model needs --x"),
        ((), "give --model"),
        (("--factory", "no_colon"), "--factory takes path.py:function"),
        (("--factory", "missing.py:f"), "missing.py: no such file"),
    ],
)
def test_usage_errors(args: tuple[str, ...], message: str) -> None:
    assert message in _one_line_error(run_cli("compare", *args))


def test_an_npy_that_will_not_load(tmp_path: Path) -> None:
    bad = tmp_path / "x.npy"
    bad.write_bytes(b"this is not numpy data")
    line = _one_line_error(run_cli("compare", "--model", "m.keras", "--x", str(bad)))
    assert "cannot load x as .npy" in line


def test_factory_that_will_not_import(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import numpy as np\ndef f(:\n")
    line = _one_line_error(run_cli("compare", "--factory", f"{broken}:f"))
    assert "cannot import the factory (SyntaxError" in line


def test_factory_errors(factory: Path) -> None:
    assert "has no function 'nope'" in _one_line_error(
        run_cli("compare", "--factory", f"{factory}:nope")
    )
    assert "factory explodes() failed: RuntimeError: cannot reach" in _one_line_error(
        run_cli("compare", "--factory", f"{factory}:explodes")
    )
    assert "expected a Keras model" in _one_line_error(
        run_cli("compare", "--factory", f"{factory}:not_a_model")
    )


@pytest.fixture()
def tiny_files(
    tmp_path: Path, tiny_model_factory: Callable[[str], Any], tiny_data: tuple[Any, Any]
) -> tuple[Path, Path, Path]:
    x, y = tiny_data
    model_path = tmp_path / "tiny.keras"
    tiny_model_factory("keras3").save(model_path)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    return model_path, tmp_path / "x.npy", tmp_path / "y.npy"


@pytest.mark.tf
def test_x_of_the_wrong_shape(tiny_files: tuple[Path, Path, Path], tmp_path: Path) -> None:
    model, _, _ = tiny_files
    np.save(tmp_path / "wide.npy", np.zeros((32, 5), "float32"))
    line = _one_line_error(
        run_cli("compare", "--model", str(model), "--x", str(tmp_path / "wide.npy"))
    )
    assert "x has shape (32, 5) but the model expects (None, 4)" in line


@pytest.mark.tf
def test_y_of_the_wrong_shape(tiny_files: tuple[Path, Path, Path], tmp_path: Path) -> None:
    model, x, _ = tiny_files
    np.save(tmp_path / "y5.npy", np.zeros((32, 5), "float32"))
    args = ("--model", str(model), "--x", str(x), "--y", str(tmp_path / "y5.npy"))
    line = _one_line_error(run_cli("compare", *args))
    assert line == (
        "tfdiag: error: y has shape (32, 5) but the model's output is (None, 1): "
        "its last dimension must be 1"
    )


@pytest.mark.tf
def test_compare_a_saved_model_and_save_the_result(
    tiny_files: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    model, x, y = tiny_files
    out = tmp_path / "cmp"
    args = ["compare", "--model", str(model), "--x", str(x), "--y", str(y)]
    args += ["--methods", "predict,predict_on_batch,fit,train_on_batch", "--repeats", "3"]
    proc = run_cli(*args, "--save", str(out), "--width", "120")
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr  # Keras's note on the saved optimizer is not ours
    assert "Inference — time per call" in proc.stdout
    assert "Training — time per call" in proc.stdout
    assert "✓ Do: `model.predict_on_batch(x)`" in proc.stdout
    doc = json.loads((tmp_path / "cmp.tfdiag.json").read_text())
    assert doc["kind"] == "compare" and doc["recommended"]["method"] == "predict_on_batch"
    assert doc["recommended"]["speedup_vs_baseline"] > 1
    assert [r["method"] for r in doc["recommendations"]] == ["predict_on_batch", "train_on_batch"]
    again = run_cli(*args, "--save", str(out))
    assert "exists; pass --force" in _one_line_error(again)


@pytest.mark.tf
def test_compare_a_factory_under_both_keras_flavours(factory: Path) -> None:
    proc = run_cli(
        "compare",
        "--factory",
        f"{factory}:tiny",
        "--methods",
        "predict,tf.function",
        "--repeats",
        "2",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    names = [m["name"] for m in doc["methods"]]
    assert names == ["predict", "tf.function", "predict (tf_keras)", "tf.function (tf_keras)"]
    assert all(m["ok"] for m in doc["methods"])
    assert {m["flavour"] for m in doc["methods"]} == {"keras3", "tf_keras"}


@pytest.mark.tf
def test_bench_quick(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = run_cli("bench", "--quick", "--out", str(out), "--width", "120")
    assert proc.returncode == 0, proc.stderr
    assert "The seeds' grid" in proc.stdout
    rows = [line.split() for line in proc.stdout.splitlines() if line.strip().startswith("small")]
    assert [r[:3] for r in rows] == [["small", "small", "numpy"], ["small", "small", "tf.data"]]
    doc = json.loads(out.read_text())
    assert (doc["schema_version"], doc["kind"]) == (1, "bench")
    assert len(doc["cells"]) == 8
    combos = {(c["loop"], c["input"], c["mode"]) for c in doc["cells"]}
    assert len(combos) == 8
    for cell in doc["cells"]:
        assert cell["error"] is None and cell["median_s"] > 0
        assert len(cell["times_s"]) == 3 and cell["number"] == 5
    with (tmp_path / "bench.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 8 and float(table[0]["median_s"]) > 0
    explained = run_cli("explain", str(out), "--width", "120")
    assert explained.returncode == 0, explained.stderr
    assert "The seeds' grid" in explained.stdout
    refused = run_cli("bench", "--quick", "--out", str(out))
    assert "exists; pass --force" in _one_line_error(refused)


def test_bench_refuses_a_grid_that_does_not_fit() -> None:
    line = _one_line_error(run_cli("bench", "--models", "large", "--data", "small"))
    assert "the large model does not fit the small data" in line
    assert "--models takes small,medium,large" in _one_line_error(
        run_cli("bench", "--models", "huge")
    )


@pytest.mark.tf
@pytest.mark.parametrize(("name", "length"), [("small", 140), ("medium", 1400)])
def test_example_seed_factories(name: str, length: int) -> None:
    from tfdiag.measure.inputs import call_factory, load_factory, takes_flavour

    fn = load_factory(f"{ROOT / 'examples' / 'seed_models.py'}:{name}")
    assert takes_flavour(fn)
    model, x, y = call_factory(fn, "keras3")
    assert x.shape == (32, length, 30) and x.dtype == np.float32 and y.shape == (32, 1)
    assert tuple(model.inputs[0].shape) == (32, length, 30)
    assert model.get_compile_config()["loss"] == "binary_crossentropy"
