"""Bad input and faults that the other test files do not already cover (docs/hardening.md)."""

from __future__ import annotations

import json
import marshal
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli
from synth import keras3_predict_report

import tfdiag
from tfdiag.stats import MAX_PROF_BYTES


def _report() -> tfdiag.Report:
    return keras3_predict_report()


def _one_line_exit_2(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.parametrize("iterations", [10**9, 1_000_001])
def test_absurd_iteration_counts_are_refused_before_running(iterations: int) -> None:
    calls = []
    with pytest.raises(tfdiag.InputError, match="at most"):
        tfdiag.profile(calls.append, 1, iterations=iterations)
    assert calls == []


def test_non_callable_is_refused_in_one_line() -> None:
    with pytest.raises(tfdiag.InputError, match="expected a callable") as info:
        tfdiag.profile("model.predict")  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_unwritable_output_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    with pytest.raises(tfdiag.InputError, match="cannot write .*a file/run.tfdiag.json"):
        _report().save(blocker / "run.tfdiag.json")
    assert blocker.read_text() == "not a folder"
    saved = _report().save(tmp_path / "ok")[0]
    line = _one_line_exit_2(run_cli("explain", str(saved), "--plot", str(blocker / "p.png")))
    assert "cannot write" in line


def test_a_failed_overwrite_keeps_the_earlier_report(tmp_path: Path, monkeypatch) -> None:
    import tfdiag._atomic as atomic

    json_path, prof_path = _report().save(tmp_path / "run")
    before = (json_path.read_bytes(), prof_path.read_bytes())

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full_disk)
    with pytest.raises(tfdiag.InputError, match="No space left"):
        _report().save(json_path, overwrite=True)
    assert (json_path.read_bytes(), prof_path.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.prof", "run.tfdiag.json"]


def test_paths_with_spaces_and_non_ascii_names(tmp_path: Path) -> None:
    folder = tmp_path / "mes résultats 結果"
    folder.mkdir()
    json_path, prof_path = _report().save(folder / "prédire ✓.tfdiag.json")
    assert prof_path.name == "prédire ✓.prof"
    for path in (json_path, prof_path):
        proc = run_cli("explain", str(path), "--format", "json", "--iterations", "10")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["findings"][0]["id"] == "per-call-input-pipeline"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"schema_version": 1, "kind": "profile", "timing": {"iterations": 3}}', "profile"),
        ("[1, 2, 3]", "no schema_version"),
        ('{"schema_version": 99, "kind": "compare"}', "newer tfdiag"),
        ('{"schema_version": 1, "kind": "mystery"}', "unknown result kind"),
        ('{"schema_version": "1"}', "schema_version"),
    ],
)
def test_reports_of_the_wrong_shape_exit_2(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "odd.tfdiag.json"
    path.write_text(content)
    assert fragment in _one_line_exit_2(run_cli("explain", str(path)))


@pytest.mark.parametrize(
    "payload",
    [
        marshal.dumps([1, 2, 3]),
        marshal.dumps({("f.py", 1, "f"): "not a tuple"}),
        marshal.dumps({("f.py", "one", "f"): (1, 1, 0.1, 0.1, {})}),
        marshal.dumps({("f.py", 1, "f"): (1, 1, 0.1, 0.1, {("g.py", 2, "g"): "x"})}),
        b"\x00\x01\x02",
    ],
)
def test_prof_files_that_are_not_pstats_exit_2(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "odd.prof"
    path.write_bytes(payload)
    line = _one_line_exit_2(run_cli("explain", str(path), "--iterations", "3"))
    assert "pstats" in line


def test_oversized_prof_is_refused_before_unmarshalling(tmp_path: Path) -> None:
    path = tmp_path / "huge.prof"
    with open(path, "wb") as fh:  # a sparse file: no disk used
        fh.truncate(MAX_PROF_BYTES + 1)
    assert "larger than" in _one_line_exit_2(run_cli("explain", str(path)))


def test_many_iterations_and_many_functions_stay_bounded(tmp_path: Path) -> None:
    """Small variants of benchmarks/scale.py: the report grows with what was measured only."""
    small = tfdiag.profile(int, iterations=50)
    big = tfdiag.profile(int, iterations=500)
    assert len(big.timing.iteration_s) == 500
    size_small = len(json.dumps(small.to_json()))
    size_big = len(json.dumps(big.to_json()))
    # 450 more iterations add two floats each, not another copy of the function table.
    assert size_big - size_small < 450 * 2 * 30
    namespace: dict[str, object] = {}
    exec(
        compile("".join(f"def f{i}(): return {i}\n" for i in range(300)), "<gen>", "exec"),
        namespace,
    )
    fns = [namespace[f"f{i}"] for i in range(300)]

    def workload() -> None:
        for f in fns:
            f()  # type: ignore[operator]

    report = tfdiag.profile(workload, iterations=5)
    generated = [f for f in report.profile.functions if f.file == "<gen>"]
    assert len(generated) == 300
    assert all(
        c.describe() == "1× per iteration"
        for c, f in zip(report.analysis.classes, report.profile.functions)
        if f.file == "<gen>"
    )


def test_a_prof_without_a_keras_step_needs_iterations(tmp_path: Path) -> None:
    path = tmp_path / "script.prof"
    path.write_bytes(marshal.dumps({("/app/x.py", 1, "main"): (1, 1, 0.1, 0.1, {})}))
    assert "pass --iterations N" in _one_line_exit_2(run_cli("explain", str(path)))
    assert run_cli("explain", str(path), "--iterations", "4").returncode == 0


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("not json", "not a JSON rules file"),
        ('{"path": "x"}', "a JSON list of rules"),
        ('[{"function": "f", "category": "other"}]', "missing 'path'"),
        ('[{"path": "x", "function": "y", "category": "nope"}]', "unknown category"),
    ],
)
def test_bad_rules_files(tmp_path: Path, content: str, fragment: str) -> None:
    saved = _report().save(tmp_path / "run")[0]
    rules = tmp_path / "rules.json"
    rules.write_text(content)
    line = _one_line_exit_2(run_cli("explain", str(saved), "--rules", str(rules)))
    assert fragment in line


def test_iterations_cannot_rewrite_a_saved_report(tmp_path: Path) -> None:
    saved = _report().save(tmp_path / "run")[0]
    line = _one_line_exit_2(run_cli("explain", str(saved), "--iterations", "7"))
    assert "applies to a bare .prof" in line and "10 iterations" in line
