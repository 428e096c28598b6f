"""XLA compilations per concrete input shape: read from the TF profiler's XSpace events
(pure parts on synthetic records, no TensorFlow), kept in the report JSON, and found as
``xla-compile-per-shape``; the real-TensorFlow check is the corpus case
``xla-compile-new-shape`` (tests/test_corpus.py)."""

from __future__ import annotations

import dataclasses
import json

from synth import SITE, Node, make_report, tensor, tf_record, trace

from tfdiag.analysis.xprof import xla_compiles, xla_function_name
from tfdiag.records.probes import Probes, XlaCompile, probes_from_json, probes_to_json
from tfdiag.records.traces import TraceEvent
from tfdiag.results.report import Report

N = 5
TRAINER = SITE + "keras/src/backend/tensorflow/trainer.py"
CALL_FLAT = SITE + "tensorflow/python/eager/polymorphic_function/concrete_function.py"


def test_hlo_module_names_give_the_function() -> None:
    assert xla_function_name("a_inference_one_step_on_data_110__.1") == "one_step_on_data"
    assert xla_function_name("__inference_train_step_42__") == "train_step"
    assert xla_function_name("cluster_7") == "cluster_7"  # not a tf.function's: kept


def test_compile_events_are_grouped_by_function_and_step() -> None:
    steps = [(0, 100), (200, 300), (400, 500)]
    events = [
        ("a_inference_one_step_on_data_110__.1", 10, 50),
        ("a_inference_one_step_on_data_110__.2", 210, 70),
        ("a_inference_other_3__.1", 600, 5),  # between steps: counted, in no step
    ]
    assert xla_compiles(events, steps) == (
        XlaCompile("one_step_on_data", 2, 120e-12, 2),
        XlaCompile("other", 1, 5e-12, 0),
    )


def _report(compiles: tuple[XlaCompile, ...], *, traces: tuple[TraceEvent, ...] = ()) -> Report:
    tf = dataclasses.replace(tf_record(wall_s=0.5, op_s=0.45), xla_compiles=compiles)
    graph = Node(CALL_FLAT, "ConcreteFunction._call_flat", 0.49 * N, N)
    root = Node(TRAINER, "TensorFlowTrainer.predict_on_batch", 0.01 * N, N, [graph])
    return make_report(
        [root],
        N,
        cold=[],
        method="predict_on_batch",
        iteration_s=(0.5,) * N,
        tf_profile=tf,
        traces=traces,
    )


def test_a_compile_in_every_traced_step_leads_with_the_function_and_the_fix() -> None:
    spec = tensor(0, 16).replace("shape=(0, 16)", "shape=(None, 16)")
    traced = (
        trace(
            0,
            (("data", spec),),
            function="TensorFlowTrainer.make_predict_function.<locals>.one_step_on_data",
            name="one_step_on_data",
        ),
    )
    report = _report((XlaCompile("one_step_on_data", 3, 1.2, 3),), traces=traced)
    lead = report.findings[0]
    assert lead.id == "xla-compile-per-shape"
    assert 0.79 < lead.impact < 0.81  # 1.2 s of 3 × 0.5 s
    assert "`one_step_on_data` 3× in 3 of 3 traced iterations" in lead.evidence[0]
    assert "the batch dimension (axis 0)" in lead.evidence[1]
    for remedy in ("drop_remainder=True", "pad", "jit_compile=False"):
        assert remedy in lead.fix
    assert "{" not in lead.fix  # every placeholder filled


def test_one_compile_or_a_cheap_one_is_no_finding() -> None:
    once = _report((XlaCompile("one_step_on_data", 1, 1.2, 1),))  # a ragged last batch
    cheap = _report((XlaCompile("one_step_on_data", 3, 0.03, 3),))  # 2 % of the time
    for report in (once, cheap, _report(())):
        assert "xla-compile-per-shape" not in [f.id for f in report.findings]


def test_compiles_round_trip_through_the_report_json() -> None:
    tf = dataclasses.replace(
        tf_record(wall_s=0.5, op_s=0.1), xla_compiles=(XlaCompile("step", 4, 2.0, 3),)
    )
    doc = json.loads(json.dumps(probes_to_json(Probes(tf_profile=tf))))
    assert doc["tf_profile"]["xla_compiles"] == [["step", 4, 2.0, 3]]
    back = probes_from_json(doc)
    assert back is not None and back.tf_profile == tf
    del doc["tf_profile"]["xla_compiles"]  # an older report
    old = probes_from_json(doc)
    assert old is not None and old.tf_profile is not None and old.tf_profile.xla_compiles == ()
