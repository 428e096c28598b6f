"""Detectors on synthetic profiles: a builder per call is reported, per-batch reads are not."""

from __future__ import annotations

from synth import SITE, Node, make_report

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
