"""Verification records without TensorFlow: the verdict rules, the JSON codec and its checks,
the ranking by measured gain, and a verified report saved and read back."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from synth import keras3_predict_report

import tfdiag
from tfdiag.records.errors import InputError
from tfdiag.records.verification import (
    BOUND,
    FAILED,
    NOT_VERIFIED,
    SKIPPED,
    VERIFIED,
    VariantRun,
    Verification,
    verification_view,
)
from tfdiag.render.formats import write


def render_text(report: Any, width: int) -> str:
    text = write(report, "text", width=width)
    assert isinstance(text, str)
    return text


def _variant(name: str, median_s: float, **kw: Any) -> VariantRun:
    return VariantRun(
        name=name, fix=f"{name}(x)", times_s=(median_s,) * 3, check="outputs", passed=True, **kw
    )


def _verification(*variants: VariantRun, base_s: float = 0.1) -> Verification:
    return Verification(
        "per-call-input-pipeline",
        baseline="model.predict(x)",
        baseline_times_s=(base_s * 0.9, base_s, base_s * 1.1),
        variants=variants,
    )


def test_the_best_fix_is_the_fastest_that_checked_out() -> None:
    wrong = VariantRun("wrong", "w", times_s=(1e-6,), passed=False, problem="outputs differ")
    bound = _variant("bound", 0.001, role=BOUND)
    v = _verification(_variant("a", 0.01), _variant("b", 0.02), wrong, bound)
    assert v.best is not None and v.best.name == "a"
    assert v.status == VERIFIED
    assert v.speedup(v.best) == pytest.approx(10.0)
    assert v.gain == pytest.approx(10.0)
    assert v.bound is bound  # reported, never the fix
    view = verification_view(v)
    assert view["status"] == "verified" and view["variant"] == "a"
    assert view["speedup"] == pytest.approx(10.0)
    assert view["bound_speedup"] == pytest.approx(100.0)
    assert view["baseline_median_s"] == pytest.approx(0.1)
    assert [x["problem"] for x in view["variants"]] == [None, None, "outputs differ", None]


def test_statuses() -> None:
    slow = _verification(_variant("same", 0.097))
    assert slow.status == NOT_VERIFIED and slow.gain == 0.0
    assert "below the ×1.10 a fix needs" in (slow.reason or "")
    failed = _verification(VariantRun("x", "x", problem="raised: ValueError: no"))
    assert failed.status == FAILED and "ValueError" in (failed.reason or "")
    skipped = Verification("drift", skipped="no mechanical fix: timeline")
    assert skipped.status == SKIPPED and skipped.reason == "no mechanical fix: timeline"
    only_bound = _verification(_variant("bound", 0.001, role=BOUND))
    assert only_bound.status == NOT_VERIFIED  # a bound alone verifies nothing


def test_a_gain_within_the_noise_is_not_verified() -> None:
    noisy = Verification(
        "conversion-overhead",
        baseline_times_s=(0.08, 0.10, 0.20, 0.30),
        variants=(VariantRun("cast", "c", times_s=(0.05, 0.08, 0.09, 0.25), passed=True),),
    )
    assert (noisy.speedup(noisy.variants[0]) or 0) > 1.1
    assert noisy.status == NOT_VERIFIED and "within the noise" in (noisy.reason or "")
    apart = replace(noisy, variants=(replace(noisy.variants[0], times_s=(0.05, 0.06, 0.07)),))
    assert apart.status == VERIFIED


def test_round_trip() -> None:
    v = replace(
        _verification(_variant("a", 0.01, max_abs_diff=0.0), _variant("b", 0.5, role=BOUND)),
        notes=("a note",),
    )
    assert Verification.from_json(json.loads(json.dumps(v.to_json()))) == v


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("variants", 0, "passed"), "yes", "passed must be true, false or null"),
        (("variants", 0, "role"), "best", "role must be one of"),
        (("variants", 0, "kind"), "magic", "kind must be inference or training"),
        (("variants", 0, "times_s"), "0.1", "times_s must be a list"),
        (("variants", 0, "times_s"), [-1.0], "out of range"),
        (("baseline_times_s",), [float("1e300")], "out of range"),
        (("finding",), 3, "finding must be a string"),
        (("skipped",), ["x"], "skipped must be a string"),
        (("variants",), {}, "variants must be a list"),
    ],
)
def test_bad_fields_are_one_line_errors(path: tuple[Any, ...], value: Any, message: str) -> None:
    doc = _verification(_variant("a", 0.01)).to_json()
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(InputError, match=message):
        Verification.from_json(doc)


def test_verified_findings_rank_by_measured_gain_within_their_severity() -> None:
    from tfdiag.advise import FindingSpec, advise
    from tfdiag.advise.finding import Detection
    from tfdiag.analysis.pipeline import analyze

    def spec(fid: str, impact: float) -> FindingSpec:
        return FindingSpec(fid, fid, lambda ctx: Detection(impact, ()), fixes={"other": "fix"})

    small = replace(_verification(_variant("a", 0.05)), finding="b")  # ×2: removes 50 %
    large = replace(_verification(_variant("a", 0.001)), finding="c")  # ×100: removes 99 %
    unverified = replace(_verification(_variant("a", 0.2)), finding="d")
    report = replace(keras3_predict_report(), verifications=(small, large, unverified))
    table = (spec("a", 0.6), spec("b", 0.5), spec("c", 0.05), spec("d", 0.05), spec("e", 0.01))
    found = advise(report, analyze(report), table)
    # c's estimate was low, its measured ×100 makes it high, and first among the high ones;
    # then b (×2), then a (not verified)
    assert [f.id for f in found] == ["c", "b", "a", "d", "e"]
    assert [f.severity for f in found] == ["high", "high", "high", "low", "low"]
    assert [f.impact for f in found][:3] == [0.05, 0.5, 0.6]  # the estimates are kept


def test_a_verified_report_survives_save_and_load(tmp_path: Path) -> None:
    v = _verification(_variant("tf.function", 0.001), _variant("predict_on_batch", 0.002))
    report = replace(keras3_predict_report(), verifications=(v,))
    assert report.findings[0].id == "per-call-input-pipeline"
    assert report.findings[0].verification == v
    report.save(tmp_path / "r", overwrite=False)
    loaded = tfdiag.load_report(tmp_path / "r.tfdiag.json")
    assert loaded.verifications == (v,)
    assert loaded.findings[0].verification == v
    doc = loaded.to_json()
    shown = doc["findings"][0]["verification"]
    assert shown["status"] == "verified" and shown["variant"] == "tf.function"
    assert shown["speedup"] == pytest.approx(100.0)
    assert shown["fix"] == "tf.function(x)"
    text = render_text(loaded, width=200)
    assert "Verification: verified" in text and "100× faster with tf.function" in text


def test_the_html_page_shows_the_verification() -> None:
    v = _verification(_variant("tf.function", 0.001))
    page = write(replace(keras3_predict_report(), verifications=(v,)), "html")
    assert isinstance(page, str)
    assert "Verification: verified" in page and "tf.function(x)" in page


def test_an_older_report_without_verifications_still_loads(tmp_path: Path) -> None:
    report = keras3_predict_report()
    report.save(tmp_path / "old")
    path = tmp_path / "old.tfdiag.json"
    doc = json.loads(path.read_text())
    del doc["verifications"]
    path.write_text(json.dumps(doc))
    loaded = tfdiag.load_report(path)
    assert loaded.verifications == ()
    assert "verification" not in loaded.to_json()["findings"][0]


def test_markup_in_a_saved_fix_is_printed_as_text(tmp_path: Path) -> None:
    v = _verification(replace(_variant("a", 0.01), fix="[bold red]boom[/] \x1b[31m"))
    report = replace(keras3_predict_report(), verifications=(v,))
    text = render_text(report, width=200)
    assert "[bold red]boom[/]" in text and "\x1b[31m" not in text


def test_verify_on_a_plain_python_call_says_what_it_could_not_do() -> None:
    def work() -> int:
        return sum(range(2000))

    report = tfdiag.profile(work, iterations=3, verify=True, tf_profiler=False)
    assert len(report.verifications) == len(report.findings)
    for f in report.findings:
        assert f.verification is not None and f.verification.status == "skipped"
    assert any(n.startswith("verify: 0 of") for n in report.notes)
    for bad in (-1, "60", True, float("nan")):
        with pytest.raises(InputError, match="verify_s"):
            tfdiag.profile(work, iterations=3, verify=True, verify_s=bad)
    with pytest.raises(InputError, match="verify must be True or False"):
        tfdiag.profile(work, iterations=3, verify="yes")  # type: ignore[arg-type]


def test_a_variant_reproduces_the_arguments_it_names_and_passes_the_rest_or_none() -> None:
    # the train step trained on x and y only, so fit(..., validation_data=...) was "verified"
    # ×457 (#20.5): what a variant does not reproduce makes it not apply
    from tfdiag.measure.verify.call import Call
    from tfdiag.measure.verify.inference import INFERENCE_VARIANTS
    from tfdiag.measure.verify.training import TRAINING_VARIANTS

    class Model:
        pass

    Model.__module__ = "keras.src.models.model"  # what verification takes for a Keras model

    class Net(Model):
        def fit(self, *args: object, **kwargs: object) -> None: ...

        def predict(self, *args: object, **kwargs: object) -> None: ...

    net = Net()
    step = TRAINING_VARIANTS["train step"]

    def dropped(**kwargs: object) -> tuple[str, ...]:
        return step.dropped(Call(net.fit, ("x", "y"), kwargs))

    assert dropped(epochs=2, batch_size=8, verbose=0, shuffle=False) == ()
    assert dropped(validation_data=("x", "y"), sample_weight="w", class_weight={0: 1.0}) == (
        "validation_data", "sample_weight", "class_weight",
    )  # fmt: skip
    assert dropped(validation_split=0.0, initial_epoch=0, callbacks=[], class_weight=None) == ()
    assert dropped(validation_split=0.2, steps_per_epoch=3) == (
        "validation_split",
        "steps_per_epoch",
    )
    everything = Call(net.fit, ("x", "y"), {"validation_data": ("x", "y"), "sample_weight": "w"})
    assert TRAINING_VARIANTS["more epochs"].dropped(everything) == ()  # passes them through
    assert TRAINING_VARIANTS["steps_per_execution"].dropped(everything) == ()
    predict = Call(net.predict, ("x",), {"callbacks": ["cb"], "steps": 2, "verbose": 0})
    for name in ("predict_on_batch", "tf.function"):
        assert INFERENCE_VARIANTS[name].dropped(predict) == ("callbacks", "steps")
