"""The seeds' TF 2.0 profile comes out with the seeds' culprits, from a bare .prof."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from tf20_fixture import ITERATIONS, tf20_predict_stats

from tfdiag.records.catalog import Category
from tfdiag.results.load import load_report


@pytest.fixture()
def tf20_prof(tmp_path: Path) -> Path:
    path = tmp_path / "seed003 tf2.0.prof"
    path.write_bytes(tf20_predict_stats().to_prof_bytes())
    return path


def test_seed_culprits_and_shares(tf20_prof: Path) -> None:
    report = load_report(tf20_prof)
    a = report.analysis
    assert report.timing.iterations == ITERATIONS  # inferred from training.py:predict
    rows = {r.name: r for r in a.culprits}
    process = rows["training_v2.py:_process_inputs"]
    graph = rows["function.py:_create_graph_function"]
    assert process.category is Category.INPUT_PIPELINE
    assert graph.category is Category.GRAPH_BUILDING
    assert process.seeds_share == pytest.approx(0.81, abs=0.01)
    assert graph.seeds_share == pytest.approx(0.72, abs=0.01)
    assert process.classification.describe() == "1× per iteration"


def test_seed_findings_lead(tf20_prof: Path) -> None:
    report = load_report(tf20_prof)
    ids = [f.id for f in report.findings]
    assert set(ids[:2]) == {"per-call-input-pipeline", "per-iteration-tracing"}
    tracing = next(f for f in report.findings if f.id == "per-iteration-tracing")
    assert any("_create_graph_function" in e for e in tracing.evidence)
    assert report.call.method == "predict"
    assert "predict_on_batch" in report.findings[0].fix


def test_explain_cli_on_the_bare_prof(tf20_prof: Path) -> None:
    proc = run_cli("explain", str(tf20_prof), "--width", "120")
    assert proc.returncode == 0, proc.stderr
    assert "training_v2.py:_process_inputs" in proc.stdout
    assert "per-call-input-pipeline" in proc.stdout
    assert "iterations inferred from" in proc.stdout


def test_explicit_iterations_override_inference(tf20_prof: Path) -> None:
    report = load_report(tf20_prof, iterations=7)
    assert report.timing.iterations == 7
    # 21 calls against N = 7: three per iteration.
    row = next(r for r in report.analysis.culprits if r.name.endswith("_process_inputs"))
    assert row.classification.describe() == "3× per iteration"


def test_header_says_how_a_bare_prof_was_read(tf20_prof: Path) -> None:
    proc = run_cli("explain", str(tf20_prof), "--iterations", "7", "--width", "120")
    assert "21 calls in the profile, read as 7 iterations" in proc.stdout
    inferred = run_cli("explain", str(tf20_prof), "--width", "120")
    assert "20 iterations + 1 cold call under cProfile" in inferred.stdout
