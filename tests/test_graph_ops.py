"""compute-bound's causes inside the graph (``tfdiag/advise/graph_ops.py``), on synthetic
records, TF-free: a `tf.print` of a whole tensor in a layer (its ``StringFormat`` op the
cost, below the ops' 50 % share), a ``tf.map_fn`` loop whose small ops leave the ops at
10 % of the wall while the graph calls take 90 % — and their near-misses: the model's own
math as the heaviest op, a loop of a few iterations."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from synth import SITE, Node, make_report, tf_record

from tfdiag.records.probes import OpRow
from tfdiag.results.report import Report

N = 5
TRAINER = SITE + "keras/src/backend/tensorflow/trainer.py"
CALL_FLAT = SITE + "tensorflow/python/eager/polymorphic_function/concrete_function.py"
STEPS = 16  # graph calls (batches) per iteration


def _ids(report: Report) -> list[str]:
    return [f.id for f in report.findings]


def _fit(top_ops: tuple[OpRow, ...], *, op_s: float, facts: Any = ()) -> Report:
    """One ``fit`` epoch of 16 graph calls per iteration, 0.7 s, the graph 95 % of it."""
    graph = Node(CALL_FLAT, "ConcreteFunction._call_flat", 0.665 * N, STEPS * N)
    root = Node(TRAINER, "TensorFlowTrainer.fit", 0.035 * N, N, [graph])
    tf = tf_record(wall_s=0.7, op_s=op_s, steps=2, top_ops=top_ops)
    return make_report(
        [root], N, cold=[], method="fit", iteration_s=(0.7,) * N, tf_profile=tf, facts=facts
    )


def _op(op_type: str, name: str, per_iteration_s: float, occurrences: int) -> OpRow:
    """An op over the record's 2 traced iterations."""
    return OpRow("Host", op_type, name, occurrences, 2 * per_iteration_s, 2 * per_iteration_s)


PRINT_OPS = (
    _op("StringFormat", "StatefulPartitionedCall/sequential/inspect_1/StringFormat", 0.3, 32),
    _op("PrintV2", "StatefulPartitionedCall/sequential/inspect_1/PrintV2", 0.01, 32),
    _op("_MklMatMul", "StatefulPartitionedCall/sequential/dense/MatMul", 0.01, 32),
)


def test_a_tf_print_in_the_step_is_compute_bound_naming_it_and_the_users_layer() -> None:
    facts = (("layer.inspect", "Inspect.call (model.py:20)"),)
    report = _fit(PRINT_OPS, op_s=0.32, facts=facts)  # ops 46 % of the wall: under 50 %
    lead = report.findings[0]
    assert lead.id == "compute-bound", _ids(report)
    assert lead.impact == pytest.approx(0.31 / 0.7, abs=0.01)
    assert lead.evidence[1] == (
        "TF profiler: `StringFormat` ops (`tf.print`) inside the step take 44 % of the "
        "iteration: `StatefulPartitionedCall/sequential/inspect_1/StringFormat`, 16× per "
        "iteration, from your layer `Inspect.call (model.py:20)`"
    )
    assert lead.fix.startswith(
        "`tf.print` inside the compiled step is the cost (your layer `Inspect.call (model.py:20)`)"
    )
    assert "won't help" not in lead.fix


def test_without_the_layers_facts_the_op_scope_names_it() -> None:
    lead = _fit(PRINT_OPS, op_s=0.32).findings[0]
    assert lead.evidence[1].endswith("from the op scope `sequential/inspect_1`")


def test_the_models_own_math_as_its_heaviest_op_is_not_a_host_op() -> None:
    ops = (_op("_MklMatMul", "StatefulPartitionedCall/sequential/dense/MatMul", 0.3, 32),)
    assert "compute-bound" not in _ids(_fit(ops, op_s=0.32))


def _map_fn_ops(iterations: int) -> tuple[OpRow, ...]:
    """The forward and gradient ops of a ``tf.map_fn`` over ``iterations`` elements per
    graph call (2 traced iterations of 16 calls), then the model's own dense layer."""
    loop = "StatefulPartitionedCall/sequential/pairwise_1/map/while/body/_18/sequential/"
    grad = (
        "StatefulPartitionedCall/gradient_tape/sequential/pairwise_1/map/while/sequential/"
        "pairwise_1/map/while_grad/body/_69/"
    )
    count = iterations * 2 * STEPS
    return (
        _op("_MklMatMul", grad + "MatMul_grad/MatMul", 0.03, count),
        _op("_MklMatMul", loop + "pairwise_1/map/while/MatMul", 0.01, count),
        _op("_MklNativeFusedMatMul", "StatefulPartitionedCall/sequential/dense/Add", 0.01, 32),
    )


def test_a_map_fn_loop_in_the_step_is_compute_bound_with_vectorized_map() -> None:
    report = _fit(_map_fn_ops(256), op_s=0.05)  # ops 7 % of the wall, the graph 95 %
    lead = report.findings[0]
    assert lead.id == "compute-bound", _ids(report)
    assert lead.impact == pytest.approx(0.95, abs=0.01)
    assert lead.evidence[1] == (
        "the step's graph runs a loop: the ops of `sequential/pairwise_1/map/while` "
        "(`tf.map_fn`) ran 256× per graph call, 80 % of the op time, from the op scope "
        "`sequential/pairwise_1/map`"
    )
    assert "tf.vectorized_map(fn, x)" in lead.fix and "won't help" not in lead.fix


def test_a_loop_of_a_few_iterations_per_call_is_not_the_cost() -> None:
    assert "compute-bound" not in _ids(_fit(_map_fn_ops(4), op_s=0.05))


def test_tf_datas_ops_are_not_counted_in_the_loops_share_of_the_model_ops() -> None:
    """The loop is 80 % of the model's ops; tf.data's iterator, on its own threads, would
    make it 44 % of all of them."""
    data = _op("Dataset", "Iterator::Root::Prefetch::BatchV2::TensorSlice", 0.041, 2 * STEPS)
    report = _fit((*_map_fn_ops(256), data), op_s=0.09)
    assert report.findings[0].id == "compute-bound", _ids(report)
    assert "80 % of the op time" in report.findings[0].evidence[1]


def test_a_recurrent_layers_loop_over_time_is_not_a_per_element_loop() -> None:
    """An LSTM's while loop runs once per time step, by nature: not a loop to vectorise."""
    ops = tuple(
        dataclasses.replace(o, name=o.name.replace("pairwise_1/map", "lstm_1"))
        for o in _map_fn_ops(256)
    )
    assert "compute-bound" not in _ids(_fit(ops, op_s=0.05))
