"""Detectors on synthetic profiles: a builder per call is reported, per-batch reads are not."""

from __future__ import annotations

import dataclasses

import pytest
from synth import SITE, Node, keras3_predict_report, make_report

from tfdiag.advise import advise
from tfdiag.records.traces import TraceEvent
from tfdiag.results.report import Report

TF = SITE + "tensorflow/python/"
KERAS = SITE + "keras/src/"


def _fit_steps(builder_per_step: bool) -> list[Node]:
    """One fit's worth of training steps: each reads a batch; maybe each builds an iterator."""
    read = Node(TF + "data/ops/optional_ops.py", "_OptionalImpl.get_value", 0.4, 10)
    step = [
        read,
        Node(
            TF + "eager/polymorphic_function/concrete_function.py",
            "ConcreteFunction._call_flat",
            0.2,
            10,
        ),
    ]
    if builder_per_step:
        step.append(Node(KERAS + "trainers/epoch_iterator.py", "EpochIterator.__init__", 0.4, 10))
    return [
        Node(
            KERAS + "backend/tensorflow/trainer.py",
            "TensorFlowTrainer.fit",
            0.01,
            10,
            children=step,
        )
    ]


def _ids(builder_per_step: bool) -> list[str]:
    report = make_report(_fit_steps(builder_per_step), 10, cold=[], method="fit")
    return [f.id for f in report.findings]


def test_reading_batches_is_not_a_per_call_pipeline() -> None:
    assert "per-call-input-pipeline" not in _ids(builder_per_step=False)


def test_building_an_iterator_every_step_is() -> None:
    assert "per-call-input-pipeline" in _ids(builder_per_step=True)


def _one(node: Node, *, method: str = "predict", **timing) -> list[str]:
    root = Node("/home/me/train.py", "step", 0.001, 10, children=[node])
    return [f.id for f in make_report([root], 10, cold=[], method=method, **timing).findings]


def test_conversion_overhead_above_and_below_threshold() -> None:
    conv = Node(TF + "framework/constant_op.py", "_constant_impl", 0.3, 10)
    work = Node(
        TF + "eager/polymorphic_function/concrete_function.py",
        "ConcreteFunction._call_flat",
        1.0,
        10,
    )
    above = Node(SITE + "pkg/a.py", "f", 0.0, 10, children=[conv, work])
    assert "conversion-overhead" in _one(above)
    small = Node(TF + "framework/constant_op.py", "_constant_impl", 0.05, 10)
    below = Node(SITE + "pkg/a.py", "f", 0.0, 10, children=[small, work])
    assert "conversion-overhead" not in _one(below)


def test_callback_overhead_above_and_below_threshold() -> None:
    work = Node(
        TF + "eager/polymorphic_function/concrete_function.py",
        "ConcreteFunction._call_flat",
        1.0,
        10,
    )
    for cb_s, expected in ((0.2, True), (0.02, False)):
        cb = Node(
            KERAS + "callbacks/progbar_logger.py", "ProgbarLogger.on_train_batch_end", cb_s, 10
        )
        ids = _one(Node(SITE + "pkg/a.py", "f", 0.0, 10, children=[cb, work]), method="fit")
        assert ("callback-overhead" in ids) is expected


def test_eager_execution_needs_many_ops_and_beside_a_graph_call_their_volume() -> None:
    def ops(calls: int, graph: bool, per_op_s: float = 20e-6, graph_s: float = 0.01) -> Node:
        # Tiny ops: their TFE_Py_FastPathExecute time is dispatch, which a graph removes.
        fast_path = Node(
            "~", "<built-in method x._pywrap_tfe.TFE_Py_FastPathExecute>", per_op_s * calls, calls
        )
        children = [Node(TF + "ops/gen_math_ops.py", "mat_mul", 0.01, calls, children=[fast_path])]
        if graph:
            children.append(
                Node(
                    TF + "eager/polymorphic_function/concrete_function.py",
                    "ConcreteFunction._call_flat",
                    graph_s,
                    10,
                )
            )
        return Node(SITE + "pkg/model.py", "call", 0.01, 10, children=children)

    assert "eager-execution" in _one(ops(200, graph=False), method="__call__")
    # Beside a graph call, the eager ops count by their volume: 41 % of the time here...
    assert "eager-execution" in _one(ops(200, graph=True), method="__call__")
    # ... and 1 % beside a graph call doing the work.
    assert "eager-execution" not in _one(ops(200, graph=True, graph_s=1.0), method="__call__")
    # Heavy ops (5 ms each) are their kernels: a graph would not make them much faster.
    assert "eager-execution" not in _one(ops(200, graph=False, per_op_s=5e-3), method="__call__")
    assert "eager-execution" not in _one(ops(50, graph=False), method="__call__")  # 5 per call


def test_build_dominated_from_the_cold_call() -> None:
    work = Node(
        TF + "eager/polymorphic_function/concrete_function.py",
        "ConcreteFunction._call_flat",
        0.1,
        11,
    )
    trace = Node(
        TF + "eager/polymorphic_function/tracing_compilation.py",
        "_create_concrete_function",
        2.0,
        1,
    )
    root = Node("/home/me/train.py", "step", 0.001, 11, children=[work, trace])
    cold = [
        Node(
            "/home/me/train.py",
            "step",
            0.0001,
            1,
            children=[Node(work.file, work.name, 0.01, 1), Node(trace.file, trace.name, 2.0, 1)],
        )
    ]
    report = make_report(
        [root], 10, cold=cold, method="train_on_batch", first_call_s=2.1, iteration_s=(0.01,) * 10
    )
    found = {f.id: f for f in report.findings}
    assert "build-dominated" in found
    assert any("210×" in e for e in found["build-dominated"].evidence)
    # The same run without the expensive trace is not build-dominated.
    cheap = make_report(
        [Node("/home/me/train.py", "step", 0.001, 11, children=[work])],
        10,
        cold=[
            Node(
                "/home/me/train.py",
                "step",
                0.0001,
                1,
                children=[Node(work.file, work.name, 0.01, 1)],
            )
        ],
        method="train_on_batch",
        first_call_s=0.012,
        iteration_s=(0.01,) * 10,
    )
    assert "build-dominated" not in [f.id for f in cheap.findings]


def _input_ids(report: Report) -> list[str]:
    return [f.id for f in report.findings]


def test_building_a_pipeline_per_call_is_not_waiting_for_input() -> None:
    # without the TF profiler, input-bound reads the caller's time in the iterator's
    # __next__, never the per-call pipeline construction (that is per-call-input-pipeline)
    ids = _input_ids(keras3_predict_report())
    assert ids[0] == "per-call-input-pipeline" and "input-bound" not in ids


def test_a_step_that_waits_in_the_iterator_is_input_bound() -> None:
    tfdata = SITE + "tensorflow/python/data/ops/iterator_ops.py"
    wait = Node(tfdata, "OwnedIterator.__next__", 0.0, 10, children=[
        Node(SITE + "tensorflow/python/eager/execute.py", "quick_execute", 0.4, 10)
    ])  # fmt: skip
    root = Node("/home/me/train.py", "train_step", 0.1, 11, children=[wait])
    ids = _input_ids(make_report([root], 10))
    assert ids[0] == "input-bound"


POLY = SITE + "tensorflow/python/eager/polymorphic_function/"


def _pipeline_with_traces(adapter_s: float) -> Report:
    """`predict` × 10 building a pipeline (``adapter_s`` per iteration outside tracing)
    whose tf.data functions are traced 3× per call (0.2 s per iteration)."""
    keras = SITE + "keras/src/"
    trace = Node(POLY + "tracing_compilation.py", "_create_concrete_function", 0.2, 33)
    wrapper = Node(
        SITE + "tensorflow/python/data/ops/structured_function.py",
        "StructuredFunctionWrapper.__init__",
        0.0,
        33,
        children=[trace],
    )
    adapter = Node(
        keras + "trainers/data_adapters/array_data_adapter.py",
        "ArrayDataAdapter.get_tf_dataset",
        adapter_s * 11,
        11,
        children=[wrapper],
    )
    root = Node(keras + "backend/tensorflow/trainer.py", "TensorFlowTrainer.predict", 0.05, 11,
                children=[adapter])  # fmt: skip
    report = make_report([root], 10, cold=[Node(root.file, root.name, 0.01, 1)])
    events = tuple(
        TraceEvent(call, "StructuredFunctionWrapper.__init__.<locals>.wrapped_fn",
                   SITE + "tensorflow/python/data/ops/structured_function.py", 200,
                   "Dataset_map_lambda", (("x", "TensorSpec(shape=(4,))"),))
        for call in range(11) for _ in range(3)
    )  # fmt: skip
    return dataclasses.replace(report, traces=events)


def test_tracing_of_a_per_call_pipeline_ranks_after_it_and_points_at_it() -> None:
    report = _pipeline_with_traces(adapter_s=0.01)  # tracing costs more than the rest
    ids = [f.id for f in report.findings]
    assert ids[:2] == ["per-call-input-pipeline", "per-iteration-tracing"]
    assert "the fix for `per-call-input-pipeline`" in report.findings[1].fix


def test_tracing_whose_cause_is_not_reported_gets_a_fix_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tfdiag.advise import table

    without = tuple(s for s in table.FINDINGS if s.id != "per-call-input-pipeline")
    monkeypatch.setattr(table, "FINDINGS", without)
    report = _pipeline_with_traces(adapter_s=0.01)
    found = advise(report, report.analysis, without)
    assert found[0].id == "per-iteration-tracing"
    assert "per-call-input-pipeline" not in found[0].fix and "fewer, longer calls" in found[0].fix


def test_a_tf_function_that_never_reaches_its_graph_runs_functions_eagerly() -> None:
    ops = Node("~", "<built-in method tensorflow.python._pywrap_tfe.TFE_Py_FastPathExecute>",
               0.1, 200 * 11)  # fmt: skip
    layer = Node(SITE + "keras/src/layers/layer.py", "Layer.__call__", 0.5, 11 * 4,
                 children=[ops])  # fmt: skip
    step = Node("/home/me/train.py", "train_step", 0.02, 11, children=[layer])
    call = Node(POLY + "polymorphic_function.py", "Function.__call__", 0.01, 11, children=[step])
    report = make_report([call], 10, method="")
    first = report.findings[0]
    assert first.id == "eager-execution"
    assert "run_functions_eagerly(False)" in first.fix
    assert any("never runs a graph" in e for e in first.evidence)
    graphed = Node(POLY + "polymorphic_function.py", "Function._call", 0.01, 11)
    call.children.append(graphed)
    assert "run_functions_eagerly" not in make_report([call], 10, method="").findings[0].fix


def test_a_new_tf_function_per_call_leads_and_its_tracing_follows() -> None:
    trace = Node(POLY + "tracing_compilation.py", "_create_concrete_function", 0.5, 11)
    call = Node(POLY + "polymorphic_function.py", "Function.__call__", 0.01, 11, children=[trace])
    serve = Node("/home/me/serve.py", "serve", 0.02, 11, children=[call])
    report = make_report([serve], 10, method="")
    events = tuple(
        TraceEvent(c, "serve.<locals>.infer", "/home/me/serve.py", 5, "infer",
                   (("a", "TensorSpec(shape=(8, 20), dtype=tf.float32, name=None)"),), c)
        for c in range(11)
    )  # fmt: skip
    found = dataclasses.replace(report, traces=events).findings
    assert [f.id for f in found[:2]] == ["model-rebuilt-per-call", "per-iteration-tracing"]
    assert "outside the loop" in found[0].fix and found[0].impact == pytest.approx(0.5 / 0.53, 0.01)
    assert "see `model-rebuilt-per-call`" in found[1].fix


def test_a_finding_that_is_part_of_another_moves_right_after_it() -> None:
    from tfdiag.advise import _after_their_cause, _Found
    from tfdiag.advise.finding import Detection
    from tfdiag.advise.table import FINDINGS

    spec = {s.id: s for s in FINDINGS}

    def row(fid: str, impact: float, severity: str, part_of: str | None = None) -> _Found:
        d = Detection(impact, (), part_of=part_of)
        return _Found(spec[fid], d, impact, None, None, severity)  # type: ignore[arg-type]

    ranked = [
        row("per-iteration-tracing", 0.5, "high", part_of="per-call-input-pipeline"),
        row("callback-overhead", 0.4, "high"),
        row("per-call-input-pipeline", 0.2, "medium"),
    ]
    out = _after_their_cause(ranked)
    assert [f.spec.id for f in out] == [
        "callback-overhead",
        "per-call-input-pipeline",
        "per-iteration-tracing",
    ]
    # a part is never more severe than the finding it is part of
    assert [f.severity for f in out] == ["high", "medium", "medium"]
    # and a medium part of a high cause goes after the other high findings
    ranked = [
        row("per-call-input-pipeline", 0.6, "high"),
        row("per-iteration-tracing", 0.2, "medium", part_of="per-call-input-pipeline"),
        row("callback-overhead", 0.4, "high"),
    ]
    assert [f.spec.id for f in _after_their_cause(ranked)] == [
        "per-call-input-pipeline",
        "callback-overhead",
        "per-iteration-tracing",
    ]
