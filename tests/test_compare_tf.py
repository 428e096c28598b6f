"""``tfdiag.compare`` on the seed-003 tiny model with real TensorFlow.

Speed is judged as orderings and ratios measured in the same run, never absolute times.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tfdiag
from tfdiag.measure.methods import INFERENCE, Method, Prepared
from tfdiag.measure.subject import Subject, to_numpy
from tfdiag.records.compare import compare_from_json
from tfdiag.records.errors import InputError
from tfdiag.results.compare import CompareResult

pytestmark = pytest.mark.tf


def test_tiny_model_gets_a_method_at_least_20x_faster_than_predict(
    tiny_model_factory: Callable[[str], Any], tiny_data: tuple[Any, Any]
) -> None:
    x, _ = tiny_data
    model = tiny_model_factory("keras3")
    result = tfdiag.compare(model, x, repeats=5)
    by = {m.name: m for m in result.methods}
    assert {m.kind for m in result.methods} == {INFERENCE}
    for name in ("predict", "predict(tf.data)", "predict_on_batch", "model(x)", "tf.function"):
        assert by[name].ok, (name, by[name].problem)
    rec = result.recommended
    predict = result.baseline(INFERENCE)
    assert rec is not None and predict is by["predict"]
    assert rec.method.name != "predict" and rec.method.ok
    assert rec.method.median_s is not None and predict.median_s is not None
    assert rec.method.median_s < predict.median_s  # the ordering...
    ratio = predict.median_s / rec.method.median_s
    assert ratio >= 20  # ...and the ratio, both measured in this run
    assert rec.speedup_vs_baseline == pytest.approx(ratio)
    assert compare_from_json(json.loads(json.dumps(result.to_json())), CompareResult) == result


def test_training_comparison_leaves_the_users_model_untouched(
    tiny_model_factory: Callable[[str], Any], tiny_data: tuple[Any, Any]
) -> None:
    x, y = tiny_data
    model = tiny_model_factory("keras3")
    before = [w.copy() for w in model.get_weights()]
    result = tfdiag.compare(
        model,
        x,
        y,
        methods=["fit", "fit eager", "fit(tf.data)", "train_on_batch", "tf.function step"],
        repeats=3,
    )
    by = {m.name: m for m in result.methods}
    for m in result.methods:
        assert m.ok, (m.name, m.problem)
        assert m.loss_after is not None and np.isfinite(m.loss_after)
    # Every copy starts from the user's weights: the same loss before training.
    assert len({round(m.loss_before or 0.0, 6) for m in result.methods}) == 1
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    assert int(model.optimizer.iterations.numpy()) == 0
    fit, tob = by["fit"], by["train_on_batch"]
    assert fit.median_s is not None and tob.median_s is not None
    assert tob.median_s < fit.median_s  # fit builds a data pipeline on every call
    rec = result.recommendation("training")
    assert rec is not None and rec.method.name != "fit" and (rec.speedup_vs_baseline or 0) > 1


def _custom(name: str, run: Callable[[Subject], Callable[[], Any]]) -> Method:
    def prepare(s: Subject) -> Prepared:
        call = run(s)
        return Prepared(call, call)

    return Method(name, f"{name}(x)", INFERENCE, False, prepare)


def test_a_wrong_method_is_marked_and_never_recommended_and_a_failing_one_shows_its_error(
    tiny_model_factory: Callable[[str], Any], tiny_data: tuple[Any, Any]
) -> None:
    x, _ = tiny_data
    model = tiny_model_factory("keras3")

    def off_by_one(s: Subject) -> Callable[[], Any]:
        fn = s.tf.function(lambda t: s.model(t, training=False))
        return lambda: to_numpy(fn(s.x)) + 1.0  # the fastest method here, but wrong

    def broken(s: Subject) -> Callable[[], Any]:
        def run() -> None:
            raise ValueError("this op cannot run here\nand a long trace")

        return run

    result = tfdiag.compare(
        model,
        x,
        methods=["predict", _custom("off_by_one", off_by_one), _custom("broken", broken)],
        repeats=3,
    )
    by = {m.name: m for m in result.methods}
    assert by["off_by_one"].mismatch is not None
    assert by["off_by_one"].mismatch.startswith("outputs differ from predict: max |Δ| 1")
    assert by["broken"].error == "ValueError: this op cannot run here"
    assert by["predict"].ok
    rec = result.recommended
    assert rec is not None and rec.method.name == "predict"
    do, dont = result.advice()
    assert do == ("Keep `model.predict(x)`: no inference method measured here is faster.",)
    assert any("off_by_one(x)` — outputs differ" in line for line in dont)


def test_keras_vs_tf_keras_twins(
    tiny_model_factory: Callable[[str], Any], tiny_data: tuple[Any, Any]
) -> None:
    x, y = tiny_data
    result = tfdiag.compare(
        tiny_model_factory("keras3"),
        x,
        y,
        twins=[tiny_model_factory("tf_keras")],
        methods=["predict", "predict_on_batch", "fit", "eager step"],
        repeats=2,
    )
    names = [m.name for m in result.methods]
    assert names == [
        "predict",
        "predict_on_batch",
        "fit",
        "eager step",
        "predict (tf_keras)",
        "predict_on_batch (tf_keras)",
        "fit (tf_keras)",
        "eager step (tf_keras)",
    ]
    for m in result.methods:
        assert m.ok, (m.name, m.problem)
        assert m.flavour == ("tf_keras" if "tf_keras" in m.name else "keras3")
    # A twin's speed-up is against the primary flavour's predict: keras vs tf.keras.
    twin = result.methods[5]
    assert result.speedup_vs_baseline(twin) is not None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m, x, y: tfdiag.compare(m.predict, x), "expected a Keras model"),
        (lambda m, x, y: tfdiag.compare(object(), x), "expected a Keras model"),
        (lambda m, x, y: tfdiag.compare(m, x[:, :3]), r"x has shape \(32, 3\)"),
        (lambda m, x, y: tfdiag.compare(m, [1.0, 2.0]), "x must be a NumPy array"),
        (lambda m, x, y: tfdiag.compare(m, x, y[:5]), "y has 5 samples but x has 32"),
        (lambda m, x, y: tfdiag.compare(m, x, np.c_[y, y]), r"y has shape \(32, 2\) but the"),
        (lambda m, x, y: tfdiag.compare(m, x, methods=["fit"]), "training methods need targets"),
        (lambda m, x, y: tfdiag.compare(m, x, methods=["nope"]), "unknown method 'nope'"),
        (lambda m, x, y: tfdiag.compare(m, x, baseline="fit"), "baseline 'fit' is not among"),
        (lambda m, x, y: tfdiag.compare(m, x, warmup=0), "warmup must be"),
    ],
)
def test_bad_input_is_one_clear_input_error(
    tiny_model_factory: Callable[[str], Any],
    tiny_data: tuple[Any, Any],
    call: Callable[[Any, Any, Any], Any],
    message: str,
) -> None:
    x, y = tiny_data
    with pytest.raises(InputError, match=message):
        call(tiny_model_factory("keras3"), x, y)


def test_training_needs_a_compiled_model(tiny_data: tuple[Any, Any]) -> None:
    from tfdiag.measure.seed_models import tiny_model

    x, y = tiny_data
    with pytest.raises(InputError, match="compiled with a loss"):
        tfdiag.compare(tiny_model(compiled=False), x, y)
