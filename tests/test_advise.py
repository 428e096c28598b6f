"""Detectors on synthetic profiles: a builder per call is reported, per-batch reads are not."""

from __future__ import annotations

from synth import SITE, Node, keras3_predict_report, make_report

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


def test_eager_execution_needs_many_ops_and_no_graph_call() -> None:
    def ops(calls: int, graph: bool, per_op_s: float = 20e-6) -> Node:
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
                    0.01,
                    10,
                )
            )
        return Node(SITE + "pkg/model.py", "call", 0.01, 10, children=children)

    assert "eager-execution" in _one(ops(200, graph=False), method="__call__")
    assert "eager-execution" not in _one(ops(200, graph=True), method="__call__")
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
