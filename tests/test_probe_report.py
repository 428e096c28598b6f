"""Probe records in the report: JSON round trip, old reports, console section, advice, files.

TF-free: the op-level record comes from the recorded xprof fixture, the samples are synthetic.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from rich.console import Console
from synth import SITE, Node, make_report

from tfdiag.advise.diagnosis import diagnosis_of
from tfdiag.analysis.oplevel import slowdowns
from tfdiag.analysis.xprof import tf_profile_from_tools
from tfdiag.records.errors import InputError
from tfdiag.records.probes import Probes, SampledStack, SamplingRecord, TfProfile
from tfdiag.render.artefacts import artefact_paths
from tfdiag.render.console import render_report
from tfdiag.results.load import load_report, report_from_json
from tfdiag.results.report import Report

DATA = Path(__file__).resolve().parent / "data" / "xprof"
EXEC = SITE + "tensorflow/python/eager/execute.py"
TRACER = SITE + "tensorflow/python/eager/polymorphic_function/tracing_compilation.py"
N = 5


def _tf_profile(iteration_s: float, builds_per_step: int = 0) -> TfProfile:
    docs = [
        json.loads((DATA / f"{t}.json").read_text())
        for t in ("framework_op_stats", "overview_page")
    ]
    return tf_profile_from_tools(
        *docs,
        iteration_s=(iteration_s,) * N,
        graph_builds_per_step=(builds_per_step,) * N,
        host_tracer_level=1,
        export_s=0.01,
    )


SAMPLES = SamplingRecord(
    interval_s=0.005,
    iteration_s=(0.011,) * N,
    frames=((EXEC, 10, "quick_execute"), ("/home/me/train.py", 3, "step")),
    stacks=(SampledStack((1, 0), 8, 0.04), SampledStack((1,), 2, 0.01)),
)


def _report(op_s: float, tracer_calls: int = 0, **probes: Any) -> Report:
    """A report whose cProfile pass is mostly op execution (``quick_execute``)."""
    children = [Node(EXEC, "quick_execute", 0.008 * N, calls=N)]
    if tracer_calls:
        children.append(Node(TRACER, "_create_concrete_function", 0.001, calls=tracer_calls))
    roots = [Node("/home/me/train.py", "step", 0.0005 * N, calls=N, children=children)]
    cold = [Node("/home/me/train.py", "step", 0.0, calls=0)]
    report = make_report(roots, N, cold=cold, method="train_on_batch", iteration_s=(0.01,) * N)
    report = replace(report, timing=replace(report.timing, profiled_iteration_s=(0.014,) * N))
    tf = _tf_profile(op_s)
    return replace(report, probes=Probes(**{"tf_profile": tf, "sampling": SAMPLES, **probes}))


def _text(report: Report) -> str:
    out = io.StringIO()
    Console(file=out, width=160, color_system=None).print(render_report(diagnosis_of(report)))
    return out.getvalue()


def test_probes_round_trip_through_json() -> None:
    report = _report(0.01)
    doc = json.loads(json.dumps(report.to_json(), allow_nan=False))
    back = report_from_json(doc)
    assert back.probes == report.probes
    assert doc["probe_summary"]["slowdown"] == pytest.approx(
        {"cProfile": 1.4, "sampling": 1.1, "TF profiler": 1.0}
    )


def test_a_report_without_probes_still_loads() -> None:
    doc = _report(0.01).to_json()
    del doc["probes"], doc["probe_summary"]
    assert report_from_json(doc).probes is None
    doc["probes"] = {"sampling": {"interval_s": 0.005, "frames": [], "stacks": [[[3], 1, 0.1]]}}
    with pytest.raises(InputError, match="probes"):
        report_from_json(doc)


def _timed(iteration_s: tuple[float, ...], traced: int = 0, **probes: Any) -> Report:
    report = _report(0.01)
    timing = replace(
        report.timing, iteration_s=iteration_s, profiled_iteration_s=(0.02,), traced=traced
    )
    return replace(report, timing=timing, probes=Probes(**probes) if probes else None)


def test_slowdowns_are_each_pass_over_the_unprofiled_median() -> None:
    names, ratios = zip(*slowdowns(_timed((0.01, 0.01, 0.03), sampling=SAMPLES)))
    assert names == ("cProfile", "sampling")  # a report whose sampler had a pass of its own
    assert ratios == pytest.approx((2.0, 1.1))
    assert slowdowns(_timed((), sampling=SAMPLES)) == ()


def test_the_tf_profiler_block_is_compared_with_the_rest_of_the_timed_pass() -> None:
    watched = replace(SAMPLES, iteration_s=(0.012, 0.012, 0.01, 0.01))
    report = _timed((0.012, 0.012, 0.01, 0.01), traced=2, sampling=watched)
    assert dict(slowdowns(report)) == pytest.approx({"cProfile": 2.0, "TF profiler": 1.2})
    assert report.timing.median_s == 0.01  # the plain iterations, after the traced block


def test_the_probe_cost_names_the_jax_profiler_on_jax() -> None:
    """Issue 35: on Keras' JAX backend the probe-cost line said "TF profiler ×1.05"; the
    block was traced by jax.profiler."""
    watched = replace(SAMPLES, iteration_s=(0.012, 0.012, 0.01, 0.01))
    report = _timed((0.012, 0.012, 0.01, 0.01), traced=2, sampling=watched)
    on_jax = replace(report, environment=replace(report.environment, backend="jax"))
    assert dict(slowdowns(on_jax)) == pytest.approx({"cProfile": 2.0, "JAX profiler": 1.2})
    text = io.StringIO()
    Console(file=text, width=200).print(render_report(diagnosis_of(on_jax)))
    assert "JAX profiler ×1.20" in text.getvalue() and "TF profiler" not in text.getvalue()


def test_console_shows_cost_op_time_no_device_and_both_breakdowns() -> None:
    report = _report(0.01)
    tf = report.probes.tf_profile if report.probes else None
    assert tf is not None
    text = _text(report)
    assert "cProfile ×1.40 · sampling ×1.10 · TF profiler ×1.00" in text
    assert "no device" in text and "CPU_ONLY" in text
    assert f"({100 * (tf.op_s - tf.input_op_s) / N / 0.01:.1f} %)" in text  # the model's ops
    assert tf.verdict[:40] in text.replace("\n", " ")
    assert "Second breakdown" in text and "op execution" in text
    findings = text.find("Findings") if "Findings" in text else text.index("No findings")
    assert findings < text.index("Probe cost")  # the answer first, the probes after


def test_retracing_agreement_and_disagreement_are_said() -> None:
    agree = _text(_report(0.01, tracer_calls=3 * N, tf_profile=_tf_profile(0.01, 3)))
    assert "they agree" in agree
    disagree = _text(_report(0.01, tracer_calls=0, tf_profile=_tf_profile(0.01, 2)))
    assert "they disagree" in disagree


def _finding_ids(report: Report) -> list[str]:
    return [f.id for f in report.findings]


def test_compute_bound_is_backed_by_op_time_when_present() -> None:
    report = _report(0.01)
    recorded = _tf_profile(0.01)
    no_wait = tuple((k, 0.0 if k.startswith("input") else v) for k, v in recorded.breakdown_ms)
    neutral = replace(recorded, verdict="Your program is NOT input-bound.", breakdown_ms=no_wait)
    busy = (neutral.op_s - neutral.input_op_s) / N  # the model's own op time per iteration

    def with_wall(wall: float, tf: TfProfile = neutral) -> Report:
        return replace(report, probes=Probes(tf_profile=replace(tf, iteration_s=(wall,) * N)))

    found = {f.id: f for f in with_wall(busy / 0.8).findings}
    assert "compute-bound" in found
    assert found["compute-bound"].evidence[0].startswith("TF profiler: the model's ops take")
    assert found["compute-bound"].impact == pytest.approx(0.8, abs=1e-3)
    assert "compute-bound" not in _finding_ids(with_wall(busy / 0.2))
    # Without the TF profiler, time inside a graph call may be waiting as much as computing:
    # compute-bound is not claimed, however much of the profile is op execution.
    assert "compute-bound" not in _finding_ids(replace(report, probes=None))


def test_tf_data_ops_and_an_input_bound_verdict_are_not_compute() -> None:
    """An input-bound fit: tf.data ops on many threads exceed the wall time; not compute."""
    report = _report(0.01)
    recorded = _tf_profile(0.01)
    flooded = replace(
        recorded,
        verdict="Your program is NOT input-bound.",
        input_op_s=recorded.input_op_s + 10.0,
        host_op_s=recorded.host_op_s + 10.0,
    )
    wall = (recorded.op_s - recorded.input_op_s) / N / 0.3  # the model's ops: 30 % of wall
    tf = replace(flooded, iteration_s=(wall,) * N)
    assert tf.op_s / N > wall  # all ops together exceed the wall time
    assert "compute-bound" not in _finding_ids(replace(report, probes=Probes(tf_profile=tf)))
    says_input_bound = replace(
        tf,
        input_op_s=recorded.input_op_s,
        host_op_s=recorded.host_op_s,
        iteration_s=((recorded.op_s - recorded.input_op_s) / N / 0.9,) * N,
        verdict="Your program is HIGHLY input-bound because 73.0% of ...",
    )
    ids = _finding_ids(replace(report, probes=Probes(tf_profile=says_input_bound)))
    assert "compute-bound" not in ids


def test_save_writes_the_probe_files_as_one_set(tmp_path: Path) -> None:
    report = _report(0.01)
    report = replace(
        report,
        probes=replace(
            report.probes or Probes(), trace_files=(("plugins/profile/r/h.xplane.pb", b"x"),)
        ),
    )
    written = report.save(tmp_path / "run")
    json_path = written[0]
    paths = artefact_paths(json_path)
    assert set(written) == {json_path, tmp_path / "run.prof", *vars(paths).values()}
    assert (paths.logdir / "plugins/profile/r/h.xplane.pb").read_bytes() == b"x"
    assert json.loads(paths.speedscope.read_text())["profiles"]
    assert json.loads(paths.session.read_text())["sample_count"] == SAMPLES.samples
    assert "<script" in paths.html.read_text()
    assert load_report(json_path).probes == report.probes
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(InputError, match="exists"):
        report.save(tmp_path / "run")
    paths.speedscope.unlink()
    with pytest.raises(InputError, match="exists"):  # the others still block: nothing written
        report.save(tmp_path / "run")
    assert not paths.speedscope.exists()
    report.save(tmp_path / "run", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_tensorboard_needs_a_trace_beside_the_report(tmp_path: Path) -> None:
    json_path, _ = replace(_report(0.01), probes=None).save(tmp_path / "bare")
    result = run_cli("tensorboard", str(json_path))
    assert result.returncode == 2
    assert "without tf_profiler=True" in result.stderr and "Traceback" not in result.stderr


def test_a_sampling_pass_without_samples_says_so() -> None:
    empty = replace(SAMPLES, stacks=())
    text = _text(replace(_report(0.01), probes=Probes(sampling=empty)))
    assert "no sample fell inside the call" in text
    assert "Second breakdown" not in text


def test_explain_shows_the_probes_of_a_saved_run(tmp_path: Path) -> None:
    json_path = _report(0.01).save(tmp_path / "run")[0]
    result = run_cli("explain", str(json_path), "--width", "140")
    assert result.returncode == 0, result.stderr
    assert "Probe cost" in result.stdout and "TF profiler ×1.00" in result.stdout
    assert "no device" in result.stdout and "Second breakdown" in result.stdout
    as_json = json.loads(run_cli("explain", str(json_path), "--format", "json").stdout)
    assert as_json["probe_summary"]["op_time"]["op_share"] > 0


def test_probe_costs_from_a_noisy_run_are_flagged() -> None:
    steady = _report(0.01)
    assert "noisy" not in _text(steady)
    noisy = replace(
        steady, timing=replace(steady.timing, iteration_s=(0.01, 0.01, 0.02, 0.03, 0.01))
    )
    assert "(! noisy" in _text(noisy)


def test_the_probe_modules_import_no_tensorflow() -> None:
    import subprocess
    import sys

    code = (
        "import sys, tfdiag, tfdiag.analysis.oplevel, tfdiag.analysis.sampled, "
        "tfdiag.render.artefacts, tfdiag.render.probes_console, tfdiag.capture.sampling, "
        "tfdiag.capture.tfprofiler, "
        "tfdiag.frontends.commands.tensorboard\n"
        "heavy = [m for m in ('tensorflow', 'xprof', 'tensorboard', 'pyinstrument') "
        "if m in sys.modules]\n"
        "assert not heavy, heavy"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
