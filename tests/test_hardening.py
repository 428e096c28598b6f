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
from tfdiag.records.pstats_table import MAX_PROF_BYTES


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


def test_arguments_are_described_without_building_their_whole_repr() -> None:
    import tracemalloc

    from tfdiag.capture.environment import describe_call

    class Loud:
        calls = 0

        def __repr__(self) -> str:
            Loud.calls += 1
            return "Loud()"

    big = b"\x00" * (4 << 20)  # its repr is 16 MiB
    text = "\u00e9" * (1 << 20)
    many = [Loud() for _ in range(100_000)]
    tracemalloc.start()
    try:
        info = describe_call(len, (big, text, many), {"nested": [[big]], "n": 10**5000})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 << 10, f"{peak:,} bytes to describe the arguments"
    assert Loud.calls < 30  # the first few items, never all 100,000
    described = [*info.args, *(v for _, v in info.kwargs)]
    assert all(len(d) <= 60 for d in described), described
    assert info.args[0].startswith("bytes of 4,194,304 b'\\x00")
    assert info.args[2].startswith("list of 100,000 [Loud(), Loud()")
    assert dict(info.kwargs)["n"] == "int of 16,610 bits"  # str(10**5000) raises ValueError
    assert describe_call(len, ((1,), {"a": [1, 2]}, set()), {}).args == (
        "(1,)",
        "{'a': [1, 2]}",
        "set()",
    )


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
    import tfdiag.records.files as atomic

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
    assert len(big.timing.plain_s) == 500
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


def test_a_rename_that_fails_midway_puts_the_earlier_set_back(tmp_path: Path, monkeypatch) -> None:
    import tfdiag.records.files as atomic

    json_path, prof_path = _report().save(tmp_path / "run")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real_replace = atomic.os.replace
    swaps = {"n": 0}

    def flaky_replace(src, dst):
        if str(src).endswith(".tmp"):
            swaps["n"] += 1
            if swaps["n"] == 2:  # the .json landed, the .prof rename fails
                raise OSError(5, "Input/output error")
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", flaky_replace)
    with pytest.raises(tfdiag.InputError, match="Input/output error"):
        keras3_predict_report(first_call_s=0.9).save(json_path, overwrite=True)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_ctrl_c_during_a_save_leaves_no_temporary(tmp_path: Path, monkeypatch) -> None:
    import tfdiag.records.files as atomic

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _report().save(tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


def test_an_argument_whose_repr_raises_does_not_lock_profile_out() -> None:
    class Bad:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    with pytest.raises(RuntimeError, match="no repr"):
        tfdiag.profile(lambda b: None, Bad(), iterations=3)
    assert tfdiag.profile(len, [1], iterations=3).timing.iterations == 3


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"schema_version": 1, "kind": []}', "kind is not a string"),
        (
            '{"schema_version": 1, "timing": {"iterations": 1' + "0" * 400 + "}, "
            '"profile": {"functions": []}}',
            "out of range",
        ),
        ("[" * 100000 + "]" * 100000, "corrupt JSON"),
    ],
)
def test_hostile_json_exits_2(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "odd.tfdiag.json"
    path.write_text(content)
    assert fragment in _one_line_exit_2(run_cli("explain", str(path)))


def test_more_iterations_than_the_profile_holds_is_refused(tmp_path: Path) -> None:
    prof = _report().save(tmp_path / "run")[1]  # predict called 11 times
    line = _one_line_exit_2(run_cli("explain", str(prof), "--iterations", "50"))
    assert "more than the 11 calls" in line


def test_ports_and_empty_paths(tmp_path: Path) -> None:
    assert "at most 65535" in _one_line_exit_2(run_cli("snakeviz", "x", "--port", "99999"))
    assert "an empty path" in _one_line_exit_2(run_cli("explain", ""))


def test_outputs_are_checked_before_a_long_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "s.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    taken = tmp_path / "out.tfdiag.json"
    taken.write_text("{}")
    line = _one_line_exit_2(run_cli("run", "--out", str(taken), str(script)))
    assert "exists" in line and not marker.exists()
    line = _one_line_exit_2(run_cli("run", "--out", str(tmp_path / "no" / "o.json"), str(script)))
    assert "not a folder" in line and not marker.exists()
    assert "--models" in _one_line_exit_2(run_cli("bench", "--models", ""))


def test_rule_fields_must_have_their_types(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text('[{"path": "x", "function": "y", "category": "other", "why": 1}]')
    saved = _report().save(tmp_path / "run")[0]
    line = _one_line_exit_2(run_cli("explain", str(saved), "--rules", str(rules)))
    assert "'why' must be a string" in line and str(rules) in line
