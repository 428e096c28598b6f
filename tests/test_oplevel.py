"""xprof's tool output → op-level figures, on a recorded fixture (tests/data/xprof). No TF."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tfdiag.analysis.oplevel import op_figures
from tfdiag.analysis.xprof import (
    TOP_OPS,
    XprofFormatError,
    events_per_step,
    parse_op_stats,
    parse_overview,
    plain_text,
    tf_profile_from_tools,
)

DATA = Path(__file__).resolve().parent / "data" / "xprof"


def _load(tool: str) -> Any:
    return json.loads((DATA / f"{tool}.json").read_text())


@pytest.fixture()
def op_doc() -> Any:
    return _load("framework_op_stats")


@pytest.fixture()
def overview_doc() -> Any:
    return _load("overview_page")


def _raw_rows(doc: Any) -> list[dict[str, Any]]:
    table = doc[0]
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, (c.get("v") for c in r["c"]))) for r in table["rows"]]


def test_op_totals_are_the_non_idle_self_times(op_doc: Any) -> None:
    rows = _raw_rows(op_doc)
    assert any(r["type"] == "IDLE" for r in rows), "fixture should hold xprof's IDLE row"
    busy = [r for r in rows if r["type"] != "IDLE"]
    ops = parse_op_stats(op_doc)
    assert ops.host_op_s == pytest.approx(sum(r["total_self_time"] for r in busy) * 1e-6)
    assert ops.op_rows == len(busy)
    assert all(o.type != "IDLE" for o in ops.top_ops)
    assert ops.device_op_s == 0.0


def test_top_ops_are_sorted_and_capped(op_doc: Any) -> None:
    ops = parse_op_stats(op_doc)
    selfs = [o.self_s for o in ops.top_ops]
    assert selfs == sorted(selfs, reverse=True)
    assert len(ops.top_ops) == min(TOP_OPS, ops.op_rows)
    assert (
        ops.top_ops[0].self_s
        == max(r["total_self_time"] for r in _raw_rows(op_doc) if r["type"] != "IDLE") * 1e-6
    )


def test_tf_data_ops_are_counted_as_input_work(op_doc: Any) -> None:
    rows = [r for r in _raw_rows(op_doc) if r["type"] != "IDLE"]
    dataset = sum(r["total_self_time"] for r in rows if r["operation"].startswith("Iterator::"))
    ops = parse_op_stats(op_doc)
    assert dataset > 0, "predict builds a tf.data pipeline: the fixture has iterator ops"
    assert dataset * 1e-6 <= ops.input_op_s < ops.host_op_s


def test_overview_steps_verdict_and_cpu_only(overview_doc: Any) -> None:
    ov = parse_overview(overview_doc)
    steps = next(t for t in overview_doc if "steptime_ms_average" in t.get("p", {}))
    assert len(ov.step_ms) == len(steps["rows"]) > 0
    rec = next(t for t in overview_doc if "statement" in t.get("p", {}))
    assert ov.verdict == rec["p"]["statement"]
    assert "input-bound" in ov.verdict
    assert not ov.has_device
    labels = dict(ov.breakdown_ms)
    assert labels["host compute"] == pytest.approx(float(steps["p"]["host_compute_time_ms_avg"]))
    assert all("<" not in a for a in ov.advice)


def test_cpu_trace_says_no_device(op_doc: Any, overview_doc: Any) -> None:
    tf = tf_profile_from_tools(
        op_doc,
        overview_doc,
        iteration_s=(0.05, 0.05, 0.05),
        graph_builds_per_step=(3, 3, 3),
        host_tracer_level=1,
    )
    assert tf.device_op_s is None and tf.h2d_s is None and tf.d2h_s is None
    assert not tf.has_device
    assert tf.graph_builds == 9
    figures = op_figures(tf)
    assert figures is not None
    assert figures.device_s is None and figures.copy_s is None
    assert figures.op_s == pytest.approx(tf.host_op_s / 3)
    assert figures.share == pytest.approx(figures.op_s / 0.05)


def _with_gpu(op_doc: Any, overview_doc: Any) -> tuple[Any, Any]:
    """The CPU fixture with a device added: hardware GPU, a kernel and two copies."""
    ops, ov = copy.deepcopy(op_doc), copy.deepcopy(overview_doc)
    template = ops[0]["rows"][0]
    ids = [c["id"] for c in ops[0]["cols"]]

    def row(kind: str, op_type: str, name: str, self_us: float) -> dict[str, Any]:
        r = copy.deepcopy(template)
        values = {
            "host_or_device": kind,
            "type": op_type,
            "operation": name,
            "total_self_time": self_us,
            "total_time": self_us,
            "occurrences": 3,
        }
        for i, col in enumerate(ids):
            if col in values:
                r["c"][i]["v"] = values[col]
        return r

    ops[0]["rows"] += [
        row("Device", "Conv2D", "model/conv", 9000.0),
        row("Device", "MemcpyHToD", "MemcpyHToD", 600.0),
        row("Device", "MemcpyDToH", "MemcpyDToH", 300.0),
    ]
    for t in ov:
        if "hardware_type" in t.get("p", {}):
            t["p"]["hardware_type"] = "GPU"
        if "device_type" in t.get("p", {}):
            t["p"]["device_type"] = "GPU"
    return ops, ov


def test_gpu_trace_gives_device_and_copy_time(op_doc: Any, overview_doc: Any) -> None:
    ops, ov = _with_gpu(op_doc, overview_doc)
    assert parse_overview(ov).has_device
    tf = tf_profile_from_tools(
        ops, ov, iteration_s=(0.01,) * 3, graph_builds_per_step=None, host_tracer_level=1
    )
    assert tf.device_op_s == pytest.approx((9000 + 600 + 300) * 1e-6)
    assert tf.h2d_s == pytest.approx(600e-6)
    assert tf.d2h_s == pytest.approx(300e-6)
    assert tf.graph_builds is None
    figures = op_figures(tf)
    assert figures is not None and figures.copy_s == pytest.approx(900e-6 / 3)
    cpu = tf_profile_from_tools(
        op_doc, overview_doc, iteration_s=(0.01,) * 3, graph_builds_per_step=(), host_tracer_level=1
    )
    assert tf.host_op_s == pytest.approx(cpu.host_op_s)


def test_events_are_counted_per_step() -> None:
    steps = [(0, 100), (200, 300), (400, 500)]
    assert events_per_step(steps, [5, 50, 150, 250, 600]) == (2, 1, 0)
    assert events_per_step([], [1, 2]) == ()


def test_html_statements_become_plain_text() -> None:
    text = plain_text('Use <a href="https://x">the tf.data API</a> &amp; more.\n  Now.')
    assert text == "Use the tf.data API & more. Now."


@pytest.mark.parametrize("doc", [None, "text", [{"cols": []}], [{"p": {"other": 1}}]])
def test_unexpected_shapes_raise(doc: Any) -> None:
    with pytest.raises(XprofFormatError):
        parse_overview(doc)
    with pytest.raises(XprofFormatError):
        parse_op_stats(doc)
