"""``tfdiag diff`` / ``tfdiag.diff`` on synthetic records: the verdict beyond the noise, the
findings matched by id, the warnings, the formats and the CLI's exit codes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli
from synth import SITE, Node, keras3_predict_report, make_report

import tfdiag
from tfdiag.analysis.diff import (
    Spread,
    environment_differences,
    paired_slower,
    paired_verdict,
    ratio,
    slower_than,
    verdict,
)
from tfdiag.measure.recheck import recheck
from tfdiag.records.errors import InputError
from tfdiag.records.report import Environment


def times(median: float, spread: float, n: int = 12) -> tuple[float, ...]:
    """``n`` times evenly from ``median - spread`` to ``median + spread``, in a shuffled order
    (no trend: a sorted run would be drift)."""
    return tuple(median - spread + 2 * spread * (k * 5 % n) / (n - 1) for k in range(n))


def test_spread_is_median_and_inclusive_quartiles() -> None:
    s = Spread.of([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (s.median_s, s.q1_s, s.q3_s, s.iqr_s, s.n) == (3.0, 2.0, 4.0, 2.0, 5)
    assert Spread.of([2.0]) == Spread(2.0, 2.0, 2.0, 1, (2.0,))
    assert s.floors_s == (1.0, 3.0) and s.floor_s == 2.0  # blocks [1, 2] and [3, 4, 5]
    with pytest.raises(ValueError):
        Spread.of([])


def test_the_verdict_is_whether_the_interquartile_intervals_overlap() -> None:
    before = Spread.of(times(10.0, 1.0))  # quartiles 9.5 .. 10.5
    assert verdict(before, Spread.of(times(9.0, 0.4))) == "faster"
    assert verdict(before, Spread.of(times(11.0, 0.4))) == "slower"
    # a 5 % change inside the noise is not a verdict
    assert verdict(before, Spread.of(times(10.5, 1.0))) == "same"
    assert verdict(before, Spread.of(times(9.5, 1.0))) == "same"
    assert ratio(before, Spread.of(times(5.0, 0.1))) == pytest.approx(0.5)
    assert ratio(Spread(0.0, 0.0, 0.0, 1), before) is None


def test_slower_than_a_factor_scales_the_before_interval() -> None:
    before = Spread.of(times(10.0, 1.0))  # Q3 10.5
    after = Spread.of(times(13.0, 0.4))  # Q1 12.8
    assert slower_than(before, after, 1.0) and slower_than(before, after, 1.2)
    assert not slower_than(before, after, 1.25)  # 12.8 < 1.25 × 10.5
    assert not slower_than(after, before, 1.0)


def test_one_block_per_side_is_never_a_verdict() -> None:
    """Three calls are one stretch of time: a load burst can cover all of them."""
    before, after = Spread.of([1.0, 1.0, 1.0]), Spread.of([2.0, 2.0, 2.0])
    assert (before.blocks, after.blocks) == (1, 1)
    assert verdict(before, after) == "same" and not slower_than(before, after, 1.2)
    four = Spread.of([2.0, 2.1, 2.0, 2.1])
    assert four.blocks == 2 and slower_than(Spread.of([1.0, 1.1, 1.0, 1.1]), four, 1.2)


def test_a_burst_in_part_of_a_run_moves_the_median_not_the_floor() -> None:
    """AFTER under a neighbour's job for most of its calls: its median and quartiles are far
    above BEFORE's, but two of its blocks' fastest calls are not, so the floors hold the gate
    (the interquartile rule alone said slower)."""
    before = Spread.of(times(1.0, 0.05))
    burst = [0.95, 3.0, 3.0, 3.0] + [3.0, 0.95, 3.1, 3.2] + [3.0, 3.3, 3.1, 3.2]
    after = Spread.of(burst)
    assert after.median_s > 2 * before.median_s and after.q1_s > 1.2 * before.q3_s
    assert not slower_than(before, after, 1.2) and verdict(before, after) == "same"


def test_the_paired_rule_reads_round_by_round_ratios() -> None:
    same = [(1.0, 1.01), (1.0, 0.99)] * 13 + [(1.0, 5.0)] * 4  # 4 rounds of 30 slowed
    assert not paired_slower(same, 1.2) and paired_verdict(same) == "same"
    slow = [(1.0 + k % 3 * 0.2, 1.5 + k % 3 * 0.3) for k in range(27)] + [(5.0, 1.5)] * 3
    assert paired_slower(slow, 1.2) and not paired_slower(slow, 1.6)
    assert paired_verdict(slow) == "slower" and paired_verdict([(b, a) for a, b in slow]) == (
        "faster"
    )
    assert not paired_slower(slow[:5], 1.2)  # too few rounds to judge


def test_the_recheck_interleaves_both_calls_round_by_round() -> None:
    order: list[str] = []
    pairs = recheck(lambda: order.append("b"), lambda: order.append("a"), rounds=6, min_block_s=0)
    assert len(pairs) == 6
    assert order[:4] == ["b", "a", "a", "b"]  # the warm-up rounds rotate the order
    assert all(o != order[i + 1] for i, o in enumerate(order[:-1]) if i % 2 == 0)


def test_timeline_findings_are_never_new_resolved_or_persisting() -> None:
    """Spikes and drift read the machine (a neighbour's job, a trend), warm-up the run's
    order: in a PR comment a "new spikes" reads as a regression the change did not make."""
    steady = times(0.05, 0.001)
    spiky = tuple(0.5 if k in (3, 8) else t for k, t in enumerate(steady))
    growing = tuple(0.05 * (1 + 0.1 * k) for k in range(12))
    ids = {
        name: [f.id for f in keras3_predict_report(iteration_s=t).findings]
        for name, t in (("spiky", spiky), ("growing", growing))
    }
    assert "spikes" in ids["spiky"] and "drift" in ids["growing"]  # the premise
    for a, b in ((steady, spiky), (growing, steady), (spiky, growing)):
        d = tfdiag.diff(keras3_predict_report(iteration_s=a), keras3_predict_report(iteration_s=b))
        listed = {c.id for c in d.new + d.resolved + d.persisting}
        assert listed == {"per-call-input-pipeline"}, listed


def test_cold_iterations_are_compared_with_nothing_warm() -> None:
    """A run whose first timed iterations still build (a fit's first batches) against one
    that starts warm: the warm-up is left out, not read as a slower AFTER."""
    warm = times(0.05, 0.001)
    cold_start = (0.5, 0.3) + warm[2:]
    d = tfdiag.diff(
        keras3_predict_report(iteration_s=warm), keras3_predict_report(iteration_s=cold_start)
    )
    assert d.after.spread.n == len(warm) - 2 and d.verdict == "same"


def test_environment_differences_name_each_field() -> None:
    a = Environment(
        python="3.11", cpu_count=2, devices=("CPU:0",), versions={"tensorflow": "2.21.0"}
    )
    assert environment_differences(a, a) == []
    b = replace(a, versions={"tensorflow": "2.20.0"}, cpu_count=16, devices=("CPU:0", "GPU:0"))
    assert environment_differences(a, b) == [
        "TensorFlow 2.21.0 → 2.20.0",
        "CPUs 2 → 16",
        "devices CPU:0 → CPU:0, GPU:0",
    ]


def predict_loop(median: float = 0.05):
    """``predict`` per batch: a data adapter built on every call."""
    return keras3_predict_report(iteration_s=times(median, 0.002))


def on_batch(median: float = 0.004):
    """The ``predict_on_batch`` fix: no per-call pipeline."""
    file = SITE + "keras/src/backend/tensorflow/trainer.py"
    name = "TensorFlowTrainer.predict_on_batch"
    return make_report(
        [Node(file, name, 0.044, 11)],
        10,
        cold=[Node(file, name, 0.004)],
        method="predict_on_batch",
        first_call_s=0.005,
        iteration_s=times(median, 0.0002),
    )


def test_the_fix_is_faster_and_its_finding_resolved() -> None:
    result = tfdiag.diff(predict_loop(), on_batch())
    assert result.verdict == "faster" and result.ratio == pytest.approx(0.08)
    assert [c.id for c in result.resolved] == ["per-call-input-pipeline"]
    assert result.new == () and result.persisting == () and result.warnings == ()
    back = tfdiag.diff(on_batch(), predict_loop())
    assert back.verdict == "slower" and [c.id for c in back.new] == ["per-call-input-pipeline"]
    assert back.slower_than(1.2) and not result.slower_than(1.2)
    same = tfdiag.diff(predict_loop(), predict_loop(0.0505))
    assert same.verdict == "same" and [c.id for c in same.persisting] == ["per-call-input-pipeline"]
    c = same.persisting[0]
    assert c.before is not None and c.after is not None and c.title == c.after.title


def test_other_machines_versions_and_partial_runs_are_compared_with_a_warning() -> None:
    after = on_batch()
    env = after.environment
    after = replace(
        after, environment=replace(env, versions={**env.versions, "tensorflow": "2.20.0"})
    )
    result = tfdiag.diff(predict_loop(), replace(after, partial=True))
    assert result.verdict == "faster"
    assert len(result.warnings) == 2
    assert "different machines or versions (TensorFlow 2.21.0 → 2.20.0)" in result.warnings[0]
    assert "after is a partial run" in result.warnings[1]
    assert "warning" in str(result.render("text")) and "2.20.0" in str(result.render("text"))


def test_a_report_without_timed_iterations_is_refused() -> None:
    bare = replace(on_batch(), timing=replace(on_batch().timing, iteration_s=()))
    with pytest.raises(InputError, match="before: the report has no timed iterations"):
        tfdiag.diff(bare, on_batch())
    with pytest.raises(InputError, match="diff takes reports or their paths"):
        tfdiag.diff(3, on_batch())  # type: ignore[arg-type]


def test_the_formats_text_json_and_html() -> None:
    result = tfdiag.diff(predict_loop(), on_batch())
    text = result.render("text", width=120)
    assert isinstance(text, str)
    assert "AFTER is faster: 0.08× the time per iteration, beyond both runs' noise" in text
    assert "resolved (1)" in text and "per-call-input-pipeline" in text and "new: none" in text
    doc = result.to_json()
    assert {"ratio", "verdict", "resolved", "new", "persisting"} <= set(doc)
    assert doc["kind"] == "diff" and doc["verdict"] == "faster"
    (gone,) = doc["resolved"]
    assert gone["id"] == "per-call-input-pipeline" and gone["after"] is None
    assert gone["before"]["severity"] == "high" and gone["before"]["impact"] > 0.5
    assert doc["before"]["iterations"] == 12 and doc["after"]["median_s"] == pytest.approx(0.004)
    page = result.render("html")
    assert isinstance(page, str) and page.startswith("<!DOCTYPE html>")
    assert "per-call-input-pipeline" in page


def test_a_538x_speed_up_reads_as_1_538_of_the_time_not_0_00x() -> None:
    """Issue 35: the headline printed a 538× speed-up as "0.00× the time"."""
    result = tfdiag.diff(predict_loop(0.538), on_batch(0.001))
    assert result.ratio == pytest.approx(1 / 538, rel=0.01)
    text = result.render("text", width=120)
    assert "AFTER is faster: 1/538 of the time per iteration, beyond both runs' noise" in text
    back = tfdiag.diff(on_batch(0.001), predict_loop(0.538)).render("text", width=120)
    assert "AFTER is slower: 538× the time per iteration" in back


def test_a_label_is_data_in_every_format() -> None:
    evil = on_batch()
    evil = replace(evil, call=replace(evil.call, label="<script>x</script>\x1b[2J[red]"))
    result = tfdiag.diff(predict_loop(), evil)
    assert "\x1b" not in str(result.render("text")) and "[red]" in str(result.render("text"))
    assert "<script>x" not in str(result.render("html"))


@pytest.fixture()
def saved(tmp_path: Path) -> tuple[Path, Path]:
    before = predict_loop().save(tmp_path / "before")[0]
    after = on_batch().save(tmp_path / "after")[0]
    return before, after


def test_cli_json_and_fail_if_slower(saved: tuple[Path, Path]) -> None:
    before, after = saved
    proc = run_cli("diff", str(before), str(after), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "faster" and doc["ratio"] < 0.5
    assert [c["id"] for c in doc["resolved"]] == ["per-call-input-pipeline"]
    assert doc["before"]["name"] == "before.tfdiag.json"
    ok = run_cli("diff", str(before), str(after), "--fail-if-slower", "1.2")
    assert ok.returncode == 0 and "AFTER is faster" in ok.stdout
    swapped = run_cli("diff", str(after), str(before), "--fail-if-slower", "1.2")
    assert swapped.returncode == 3, swapped.stderr  # its own code: 1 is a crash
    assert "AFTER is slower than 1.2 × BEFORE beyond the noise" in swapped.stderr
    assert run_cli("diff", str(after), str(before)).returncode == 0  # no gate: a report


@pytest.mark.parametrize("fmt", ["json", "html", "text"])
def test_the_gate_stands_when_the_reader_of_stdout_has_gone(
    saved: tuple[Path, Path], fmt: str
) -> None:
    """#32: piped into a reader that stops early, a 12x slower run exited 0."""
    import os
    import subprocess
    import sys

    before, after = saved
    read, write = os.pipe()
    os.close(read)  # the reader is gone before a byte is written
    proc = subprocess.run(
        [sys.executable, "-m", "tfdiag", "diff", str(after), str(before)]
        + ["--fail-if-slower", "1.2", "--format", fmt],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "120"},
    )
    os.close(write)
    assert proc.returncode == 3, proc.stderr
    assert "AFTER is slower than 1.2 × BEFORE" in proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr


def test_a_crash_is_not_slower(saved: tuple[Path, Path], tmp_path: Path) -> None:
    before, after = saved
    boom = tmp_path / "boom.py"  # a bug inside diff: exit 1, never the gate's 3
    boom.write_text(
        "import sys, tfdiag.results.diff as d\n"
        "def broken(*a): raise RuntimeError('a bug')\n"
        "d.diff_records = broken\n"
        "from tfdiag.frontends.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, str(boom), "diff", str(before), str(after), "--fail-if-slower", "1.2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "internal error: RuntimeError: a bug" in proc.stderr


def test_a_predict_report_is_not_diffed_against_a_fit_report(tmp_path: Path) -> None:
    predict = predict_loop().save(tmp_path / "predict")[0]
    fit = replace(predict_loop(), call=replace(predict_loop().call, label="M.fit", method="fit"))
    fitted = fit.save(tmp_path / "fit")[0]
    with pytest.raises(InputError, match=r"\(inference\), AFTER M.fit \(training\)"):
        tfdiag.diff(predict, fitted)
    proc = run_cli("diff", str(predict), str(fitted))
    assert proc.returncode == 2 and proc.stdout == ""
    assert "not two runs of one call" in proc.stderr
    assert tfdiag.diff(predict, on_batch()).verdict  # predict against predict_on_batch: one work


@pytest.mark.parametrize(
    "args, message",
    [
        (("missing.tfdiag.json", "{after}"), "missing.tfdiag.json"),
        (("{before}", "{after}", "--fail-if-slower", "0"), "must be a positive factor"),
        (("{before}", "{after}", "--fail-if-slower", "nan"), "must be a positive factor"),
        (("{before}",), "the following arguments are required: after"),
        (("{before}", "{notes}"), "not a tfdiag report"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(
    saved: tuple[Path, Path], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text('{"hello": 1}')
    paths = {"before": str(saved[0]), "after": str(saved[1]), "notes": str(notes)}
    proc = run_cli("diff", *(a.format(**paths) for a in args))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("tfdiag: error: ")
    assert message in proc.stderr


def test_cli_warns_on_stderr_beside_json(saved: tuple[Path, Path], tmp_path: Path) -> None:
    other = on_batch()
    other = replace(other, environment=replace(other.environment, cpu_count=64))
    path = other.save(tmp_path / "other")[0]
    proc = run_cli("diff", str(saved[0]), str(path), "--format", "json")
    assert proc.returncode == 0
    assert proc.stderr.startswith("tfdiag: warning: the runs are from different machines")
    assert json.loads(proc.stdout)["warnings"][0].startswith("the runs are from different")


def test_cli_diff_needs_no_tensorflow(saved: tuple[Path, Path]) -> None:
    from conftest import run_cli_without_tensorflow

    proc = run_cli_without_tensorflow("diff", str(saved[0]), str(saved[1]), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "faster"
