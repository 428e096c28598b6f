"""The probes on real TensorFlow: op time vs wall, failures that leave notes, saved files."""

from __future__ import annotations

import json
import sys
import tempfile
import threading
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import tfdiag
from tfdiag.analysis.oplevel import op_figures, retracing_check
from tfdiag.analysis.sampled import sampled_shares
from tfdiag.analysis.xprof import parse_overview
from tfdiag.records.catalog import Category
from tfdiag.render.artefacts import artefact_paths
from tfdiag.results.report import Report

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def medium_train() -> tuple[Any, Any, Any]:
    """The seeds' small Conv1D model on medium data (32×1400×30): ~0.1 s per train step."""
    import numpy as np

    from tfdiag.measure.seed_models import batch_shape, build_model

    MEDIUM_DATA = batch_shape("medium")

    rng = np.random.default_rng(0)
    x = rng.standard_normal(MEDIUM_DATA).astype("float32")
    y = rng.integers(0, 2, (MEDIUM_DATA[0], 1)).astype("float32")
    return build_model("small", MEDIUM_DATA), x, y


@pytest.fixture(scope="module")
def predict_report(tiny_data: tuple[Any, Any]) -> Report:
    """Seed 003: the tiny model's predict, with both probes."""
    from tfdiag.measure.seed_models import tiny_model

    model = tiny_model()
    return tfdiag.profile(
        model.predict, tiny_data[0], iterations=5, verbose=0, sampling=True, tf_profiler=True
    )


def _gpu() -> bool:
    import tensorflow as tf

    return bool(tf.config.list_physical_devices("GPU"))


def test_medium_train_step_is_op_time_and_compute_bound(medium_train: Any) -> None:
    model, x, y = medium_train
    report = tfdiag.profile(model.train_on_batch, x, y, iterations=3, tf_profiler=True)
    assert report.probes is not None and report.probes.tf_profile is not None
    tf = report.probes.tf_profile
    ops = op_figures(tf)
    assert ops is not None
    assert ops.share >= 0.7, f"TF ops {ops.op_s:.4f} s of {ops.wall_s:.4f} s wall"
    found = {f.id: f for f in report.findings}
    assert "compute-bound" in found
    assert "makes the call profiled" in found["compute-bound"].evidence[0]  # the user's line
    assert "TF profiler" in found["compute-bound"].evidence[1]
    if _gpu():
        assert tf.device_op_s is not None and tf.h2d_s is not None
    else:
        assert tf.device_op_s is None and tf.h2d_s is None and tf.d2h_s is None
        assert "no device" in _console(report)
    assert tf.top_ops and "Conv" in tf.top_ops[0].type


def _console(report: Report) -> str:
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=140, color_system=None).print(report)
    return out.getvalue()


def test_predict_op_time_is_small_and_input_pipeline_findings_lead(
    predict_report: Report,
) -> None:
    assert predict_report.probes is not None
    tf = predict_report.probes.tf_profile
    assert tf is not None
    ops = op_figures(tf)
    assert ops is not None and ops.share < 0.3
    ids = [f.id for f in predict_report.findings]
    assert ids[0] == "per-call-input-pipeline"
    assert "compute-bound" not in ids
    assert "input-bound" in tf.verdict
    check = retracing_check(predict_report, predict_report.analysis)
    assert check is not None and check.agree and check.trace_per_step >= 1
    shares = sampled_shares(predict_report)
    assert shares is not None
    assert max(shares, key=lambda c: shares[c]) is Category.INPUT_PIPELINE
    names, _ = zip(
        *json.loads(json.dumps(predict_report.to_json()))["probe_summary"]["slowdown"].items()
    )
    # The sampler watched the whole timed pass: only the TF profiler's block has a ratio.
    assert names == ("cProfile", "TF profiler")


def test_saved_files_are_readable_by_xprof_pyinstrument_and_parsers(
    predict_report: Report, tmp_path: Path
) -> None:
    from pyinstrument.session import Session
    from xprof.convert import raw_to_tool_data

    json_path = predict_report.save(tmp_path / "predict")[0]
    paths = artefact_paths(json_path)
    traces = [str(p) for p in paths.logdir.glob("plugins/profile/*/*.xplane.pb")]
    assert len(traces) == 1
    data, _ = raw_to_tool_data.xspace_to_tool_data(traces, "overview_page", {})
    assert parse_overview(json.loads(data)).step_ms
    speedscope = json.loads(paths.speedscope.read_text())
    assert speedscope["profiles"][0]["type"] == "evented" and speedscope["shared"]["frames"]
    session = Session.load(paths.session)
    record = predict_report.probes.sampling if predict_report.probes else None
    assert record is not None and session.sample_count == record.samples
    page = paths.html.read_text()
    HTMLParser().feed(page)
    assert page.lstrip().lower().startswith("<!doctype html>")
    loaded = tfdiag.load_report(json_path)
    assert loaded.probes == predict_report.probes
    assert loaded.findings == predict_report.findings


def _fast_call(tiny_data: tuple[Any, Any]) -> Callable[[], Any]:
    from tfdiag.measure.seed_models import tiny_model

    model, x = tiny_model(), tiny_data[0]
    return lambda: model.predict_on_batch(x)


def test_a_tf_profiler_started_by_the_user_is_left_running(
    tiny_data: tuple[Any, Any], tmp_path: Path
) -> None:
    import tensorflow as tf

    call = _fast_call(tiny_data)
    tf.profiler.experimental.start(str(tmp_path / "mine"))
    try:
        report = tfdiag.profile(call, iterations=3, tf_profiler=True, sampling=True)
    finally:
        tf.profiler.experimental.stop()  # raises if tfdiag had stopped the user's session
    assert report.probes is not None
    assert report.probes.tf_profile is None and report.probes.sampling is not None
    assert any("another TF profiler" in n for n in report.notes)
    assert list((tmp_path / "mine").glob("plugins/profile/*/*.xplane.pb"))


def test_missing_xprof_leaves_a_note_and_the_rest_completes(
    tiny_data: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    call = _fast_call(tiny_data)
    monkeypatch.setitem(sys.modules, "xprof.convert", None)
    monkeypatch.setitem(sys.modules, "xprof.convert.raw_to_tool_data", None)
    report = tfdiag.profile(call, iterations=3, tf_profiler=True, sampling=True)
    assert report.probes is not None and report.probes.tf_profile is None
    assert report.probes.sampling is not None
    assert any("xprof is not installed" in n for n in report.notes)


def test_an_unwritable_trace_folder_leaves_a_note(
    tiny_data: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    call = _fast_call(tiny_data)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(tempfile, "tempdir", str(blocker))
    report = tfdiag.profile(call, iterations=3, tf_profiler=True)
    assert report.probes is None  # the only probe asked for recorded nothing
    assert any("cannot create the trace folder" in n for n in report.notes)


@pytest.mark.parametrize("where", ["TF-profiled block", "sampled block"])
def test_a_call_that_raises_in_the_timed_pass_leaves_no_profiler(
    tiny_data: tuple[Any, Any], tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tensorflow as tf

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where the trace folder goes

    call, n = _fast_call(tiny_data), 4  # cold + 3 profiled; 4 timed, the first 2 TF-profiled
    failing_call = 1 + 3 + (2 if where == "TF-profiled block" else 4)
    calls = []

    def flaky() -> Any:
        calls.append(1)
        if len(calls) == failing_call:
            raise RuntimeError("user bug")
        return call()

    with pytest.raises(RuntimeError, match="user bug"):
        tfdiag.profile(flaky, iterations=n)
    assert len(calls) == failing_call
    assert sys.getprofile() is None
    assert not any(t.name == "tfdiag-sampler" for t in threading.enumerate())
    assert not list(temp.iterdir())  # no trace folder left behind, written or not
    tf.profiler.experimental.start(str(tmp_path / "after"))  # no profiler left running
    tf.profiler.experimental.stop()
    assert not tfdiag.profile(call, iterations=3).partial  # the lock was released
