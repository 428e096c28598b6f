"""The comparison result on synthetic numbers: ranking, recommendation, advice, JSON, view."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, run_cli, run_cli_without_tensorflow
from rich.console import Console
from synth import keras3_predict_report

from tfdiag.measure.check import loss_problem, output_mismatch
from tfdiag.measure.validate import check_data
from tfdiag.records.compare import MethodResult, Settings, compare_from_json
from tfdiag.records.errors import InputError
from tfdiag.records.report import Environment
from tfdiag.render.compare_console import render_compare
from tfdiag.results.compare import CompareResult
from tfdiag.results.load import load_result

BUILT = "predict = tf.function(lambda x: model(x, training=False))"


def _m(name: str, median_s: float | None, kind: str = "inference", **kw: object) -> MethodResult:
    times = () if median_s is None else (median_s * 0.98, median_s, median_s * 1.02)
    return MethodResult(
        name=name,
        method=str(kw.pop("method", name)),
        call=str(kw.pop("call", f"call:{name}")),
        kind=kind,
        flavour=str(kw.pop("flavour", "keras3")),
        eager=bool(kw.pop("eager", False)),
        times_s=times,
        warmup_s=(0.5, median_s or 0.1),
        **kw,  # type: ignore[arg-type]
    )


def _result(*methods: MethodResult) -> CompareResult:
    return CompareResult(
        methods=methods,
        model="Functional 'tiny' · 13 parameters",
        flavour="keras3",
        data=(("x", "ndarray float32 (32, 4)"),),
        settings=Settings(repeats=3),
        baselines=(("inference", "predict"), ("training", "fit")),
        environment=Environment(
            python="3.11", cpu_count=2, versions={"tensorflow": "2.21.0", "keras": "3.15.1"}
        ),
        notes=("a note",),
        created="2026-11-29T00:00:00+00:00",
    )


@pytest.fixture()
def mixed() -> CompareResult:
    """predict 100 ms; a faster method that mismatches; one that fails; the true best 2 ms."""
    return _result(
        _m("predict", 0.100, call="model.predict(x)"),
        _m("predict_on_batch", 0.001, mismatch="outputs differ from predict: max |Δ| 0.3"),
        _m("tf.function(jit)", None, error="InvalidArgumentError: XLA cannot compile"),
        _m("tf.function", 0.002, call="tf.function(model)(x)"),
        _m("model(x)", 0.004, eager=True),
        _m("uncompiled predict", 0.099),
        _m("fit", 0.050, "training", call="model.fit(x, y)", loss_before=0.7, loss_after=0.6),
        _m("train_on_batch", 0.005, "training", loss_before=0.7, loss_after=0.65),
        _m("fit eager", 0.080, "training", eager=True, loss_before=0.7, loss_after=0.66),
        _m(
            "tf.function step",
            0.001,
            "training",
            loss_before=0.7,
            loss_after=float("nan"),
            mismatch="loss became nan (it was 0.7)",
        ),
    )


def test_never_recommends_a_mismatching_or_failed_method(mixed: CompareResult) -> None:
    rec = mixed.recommendation("inference")
    assert rec is not None
    assert rec.method.name == "tf.function"  # predict_on_batch is faster but wrong
    assert rec.speedup_vs_baseline == pytest.approx(50.0)
    assert mixed.recommended == rec


def test_ranking_ratio_and_percent_against_the_baseline(mixed: CompareResult) -> None:
    by = {m.name: m for m in mixed.methods}
    assert mixed.ratio_to_fastest(by["model(x)"]) == pytest.approx(2.0)
    assert mixed.ratio_to_fastest(by["predict"]) == pytest.approx(50.0)
    assert mixed.percent_vs_baseline(by["tf.function"]) == pytest.approx(4900.0)
    assert mixed.percent_vs_baseline(by["predict"]) == pytest.approx(0.0)
    assert mixed.percent_vs_baseline(by["tf.function(jit)"]) is None
    assert mixed.speedup_vs_baseline(by["model(x)"]) == pytest.approx(25.0)


def test_training_recommendation_skips_a_diverged_loss(mixed: CompareResult) -> None:
    rec = mixed.recommendation("training")
    assert rec is not None and rec.method.name == "train_on_batch"
    assert rec.speedup_vs_baseline == pytest.approx(10.0)


def test_advice_says_do_and_dont_in_keras_terms(mixed: CompareResult) -> None:
    do, dont = mixed.advice()
    assert do[0] == (
        f"Do: `{BUILT}` once, then `predict(x)` per call — 50× faster than `model.predict(x)` here "
        "(2.0 ms vs 100.0 ms per call)"
    )
    assert any(
        line.startswith("Don't: `model.predict(x)` for this model and data — 50×") for line in dont
    )
    assert any("call:predict_on_batch` — outputs differ from predict" in line for line in dont)
    assert any("fails here: InvalidArgumentError" in line for line in dont)
    assert not any("call:model(x)" in line for line in do + dont)  # 2×: neither do nor don't


def test_keep_the_baseline_when_nothing_beats_it() -> None:
    result = _result(_m("predict", 0.001, call="model.predict(x)"), _m("model(x)", 0.004))
    do, _ = result.advice()
    assert do == ("Keep `model.predict(x)`: no inference method measured here is faster.",)
    rec = result.recommended
    assert rec is not None and rec.speedup_vs_baseline == pytest.approx(1.0)


def test_nothing_recommended_when_every_method_failed() -> None:
    result = _result(_m("predict", None, error="ValueError: bad"))
    assert result.recommended is None
    assert result.advice()[1][0].startswith("Don't rely on any inference method")
    assert result.to_json()["recommended"] is None


def test_json_has_the_documented_fields(mixed: CompareResult) -> None:
    doc = mixed.to_json()
    assert (doc["schema_version"], doc["kind"]) == (1, "compare")
    assert doc["recommended"]["method"] == "tf.function"
    assert doc["recommended"]["speedup_vs_baseline"] == pytest.approx(50.0)
    assert [r["kind"] for r in doc["recommendations"]] == ["inference", "training"]
    for m in doc["methods"]:
        assert {"name", "median_s", "iqr_s", "ok", "error", "mismatch"} <= set(m)
    pob = next(m for m in doc["methods"] if m["name"] == "predict_on_batch")
    assert pob["ok"] is False and pob["mismatch"].startswith("outputs differ")
    nan = next(m for m in doc["methods"] if m["name"] == "tf.function step")
    assert nan["loss_after"] is None  # JSON has no NaN
    json.dumps(doc, allow_nan=False)


def test_json_round_trip_rebuilds_the_same_result(mixed: CompareResult) -> None:
    clean = _result(*(m for m in mixed.methods if m.name != "tf.function step"))
    doc = json.loads(json.dumps(clean.to_json(), allow_nan=False))
    assert compare_from_json(doc, CompareResult) == clean


def test_save_is_atomic_named_and_never_overwrites(tmp_path: Path, mixed: CompareResult) -> None:
    path = mixed.save(tmp_path / "cmp")
    assert path.name == "cmp.tfdiag.json"
    loaded = load_result(path)
    assert isinstance(loaded, CompareResult)
    assert loaded.recommended is not None and loaded.recommended.method.name == "tf.function"
    with pytest.raises(InputError, match="exists"):
        mixed.save(path)
    mixed.save(path, overwrite=True)
    assert [p.name for p in tmp_path.iterdir()] == ["cmp.tfdiag.json"]


def test_a_corrupt_compare_result_is_an_input_error(tmp_path: Path, mixed: CompareResult) -> None:
    doc = mixed.to_json()
    doc["methods"][0]["times_s"] = [-1.0]
    bad = tmp_path / "bad.tfdiag.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="time ≤ 0"):
        load_result(bad)


def _text(result: CompareResult, width: int = 110) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None).print(render_compare(result))
    return buf.getvalue()


def test_console_view(mixed: CompareResult) -> None:
    text = _text(mixed)
    assert "tfdiag · compare" in text
    assert "Inference — time per call" in text and "Training — time per call" in text
    row = next(line for line in text.splitlines() if line.lstrip().startswith("tf.function "))
    assert "2.0 ms" in row and "★ best" in row and "+4,900 %" in row and "50.0×" in row
    assert "mismatch predict_on_batch: outputs differ from predict" in text
    assert "error tf.function(jit): InvalidArgumentError" in text
    flat = " ".join(text.split())  # the Do line wraps
    assert f"✓ Do: `{BUILT}` once, then `predict(x)` per call — 50× faster" in flat
    assert "note: a note" in text


def test_console_view_flags_noise() -> None:
    noisy = MethodResult(
        "predict", "predict", "p", "inference", "keras3", False, 1, (1.0, 1.5, 0.6)
    )
    text = _text(_result(noisy))
    row = next(line for line in text.splitlines() if line.startswith("predict "))
    assert "1.00 s  450.0 ms !" in row  # median, then the IQR flagged noisy
    assert "1 of 1 methods vary by more than 10 % between blocks (marked !)" in text


def test_tfdiag_compare_stays_the_function_after_submodule_imports(
    tmp_path: Path, mixed: CompareResult
) -> None:
    import tfdiag.records.bench  # a later submodule import

    load_result(mixed.save(tmp_path / "c"))
    assert callable(tfdiag.compare) and tfdiag.compare.__name__ == "compare"


# -- checks ----------------------------------------------------------------------------


def test_output_check() -> None:
    ref = np.array([[0.5], [0.25]], dtype="float32")
    assert output_mismatch(ref + 1e-7, ref, rtol=1e-3, atol=1e-5, against="predict") == (
        None,
        pytest.approx(1e-7, abs=1e-7),
    )
    message, diff = output_mismatch(ref + 0.1, ref, rtol=1e-3, atol=1e-5, against="predict")
    assert message is not None and message.startswith("outputs differ from predict: max |Δ| 0.1")
    assert diff == pytest.approx(0.1, rel=1e-3)
    assert "shape" in str(output_mismatch(ref[:1], ref, rtol=0, atol=0, against="predict")[0])
    assert "2 outputs" in str(output_mismatch([ref, ref], ref, rtol=0, atol=0, against="p")[0])
    nan = ref.copy()
    nan[0, 0] = np.nan
    assert "non-finite" in str(output_mismatch(nan, ref, rtol=0, atol=0, against="p")[0])
    assert output_mismatch({"a": ref}, {"a": ref}, rtol=0, atol=0, against="p")[0] is None


def test_outputs_that_are_all_nan_never_agree() -> None:
    """Issue 32 (also noticed): an all-NaN example 'verified' a fix, NaN equal to NaN. Some
    NaN where the reference has them, beside finite values that agree, still agrees."""
    nan = np.full((2, 3), np.nan, dtype="float32")
    message, diff = output_mismatch(nan, nan.copy(), rtol=1e-3, atol=1e-5, against="the call")
    assert message is not None and "every output value is NaN" in message and diff is None
    inf = np.full((2,), np.inf)
    assert output_mismatch([inf], [inf], rtol=0, atol=0, against="p")[0] is not None
    partial = np.array([np.nan, 1.0])
    assert output_mismatch(partial, partial.copy(), rtol=0, atol=0, against="p")[0] is None


def test_loss_check() -> None:
    assert loss_problem(0.7, 0.6, loss_rise=0.5) is None
    assert loss_problem(0.7, 0.9, loss_rise=0.5) is None
    assert "rose" in str(loss_problem(0.7, 1.2, loss_rise=0.5))
    assert "nan" in str(loss_problem(0.7, float("nan"), loss_rise=0.5))
    assert loss_problem(-1.0, -0.9, loss_rise=0.5) is None  # negative losses: rise by |before|
    assert "rose" in str(loss_problem(-1.0, 0.0, loss_rise=0.5))


class _Tensor:
    def __init__(self, *shape: int | None) -> None:
        self.shape = shape


class _Shaped:
    """Just what check_data reads of a model: the shapes of its inputs and outputs."""

    def __init__(self, inputs: list[_Tensor], outputs: list[_Tensor]) -> None:
        self.inputs, self.outputs = inputs, outputs


@pytest.mark.parametrize(
    ("outputs", "y", "message"),
    [
        (
            [(None, 1)],
            np.zeros((32, 5)),
            r"y has shape \(32, 5\) but the model's output is \(None, 1\)",
        ),
        ([(None, 3)], np.zeros((32, 2)), "its last dimension must be 3"),
        ([(None, 1), (None, 2)], [np.zeros((32, 1)), np.zeros((32, 3))], r"\(None, 2\)"),
        ([(None, 1)], np.zeros((31, 1)), "y has 31 samples but x has 32"),
        ([(None, 1)], [np.zeros((32, 1)), np.zeros((31, 1))], "different numbers of samples"),
        ([(None, 10)], np.zeros((32, 1)), None),  # integer labels for a sparse loss
        ([(None, 10)], np.zeros(32), None),
        ([(None, 1)], np.zeros(32), None),
        ([(None, 4, 2)], np.zeros((32, 4, 2)), None),
        ([(None, None)], np.zeros((32, 7)), None),
        ([(None, 1), (None, 2)], {"a": np.zeros((32, 9))}, None),  # dicts: matched by Keras
    ],
)
def test_target_check(
    outputs: list[tuple[int | None, ...]], y: object, message: str | None
) -> None:
    model = _Shaped([_Tensor(None, 4)], [_Tensor(*shape) for shape in outputs])
    x = np.zeros((32, 4), "float32")
    if message is None:
        check_data(model, x, y)
    else:
        with pytest.raises(InputError, match=message):
            check_data(model, x, y)


def test_target_check_skips_a_model_without_outputs() -> None:
    class Unbuilt:
        @property
        def outputs(self) -> list[object]:
            raise AttributeError("not built")

        inputs: list[object] = []

    check_data(Unbuilt(), np.zeros((32, 4)), np.zeros((32, 5)))


# -- explain through the CLI ------------------------------------------------------------


def test_explain_a_saved_comparison(tmp_path: Path, mixed: CompareResult) -> None:
    path = mixed.save(tmp_path / "cmp")
    proc = run_cli("explain", str(path), "--width", "120")
    assert proc.returncode == 0, proc.stderr
    assert "tfdiag · compare" in proc.stdout and "★ best" in proc.stdout
    proc = run_cli("explain", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "compare" and doc["recommended"]["method"] == "tf.function"
    assert doc == json.loads(json.dumps(mixed.to_json(), allow_nan=False)) | {"tool": doc["tool"]}


def test_explain_a_comparison_without_tensorflow(tmp_path: Path, mixed: CompareResult) -> None:
    path = mixed.save(tmp_path / "cmp")
    proc = run_cli_without_tensorflow("explain", str(path), "--width", "100")
    assert proc.returncode == 0, proc.stderr

    def row(name: str) -> str:
        return next(line for line in proc.stdout.splitlines() if line.startswith(f"{name}  "))

    assert "★ best" in row("tf.function") and "baseline" in row("predict")
    assert "mismatch" in row("predict_on_batch") and "error" in row("tf.function(jit)")
    assert "…" not in proc.stdout
    assert "! = IQR above 10 % of the median; first = the cold first call" in " ".join(
        proc.stdout.split()
    )


def test_the_per_call_pipeline_finding_names_one_remedy_and_one_alternative() -> None:
    report = keras3_predict_report()
    finding = next(f for f in report.findings if f.id == "per-call-input-pipeline")
    assert finding.fix.startswith("`model.predict` builds a data pipeline")
    assert "For in-memory batches call `model.predict_on_batch(x)`" in finding.fix
    # one alternative, no list of every other way (compare measures them when asked)
    assert finding.fix.endswith("or `model(x, training=False)` inside a `tf.function` built once.")
    assert "tfdiag.compare" not in finding.fix


def test_docs_describe_every_method() -> None:
    from tfdiag.measure.methods import METHODS

    doc = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    for method in METHODS:
        assert f"| `{method.name}` |" in doc, method.name


@pytest.mark.parametrize(("twin_s", "expected"), [(0.0019, "keras3"), (0.0010, "tf_keras")])
def test_another_keras_flavour_is_recommended_only_when_clearly_faster(
    twin_s: float, expected: str
) -> None:
    result = _result(
        _m("predict", 0.1, call="model.predict(x)"),
        _m("tf.function", 0.002, call="f(x)"),
        _m("predict (tf_keras)", 0.09, method="predict", flavour="tf_keras"),
        _m("tf.function (tf_keras)", twin_s, method="tf.function", call="f(x)", flavour="tf_keras"),
    )
    rec = result.recommended
    assert rec is not None and rec.method.method == "tf.function"
    assert rec.method.flavour == expected
    do, _ = result.advice()
    assert len(do) == 1  # one method, in one flavour
    twin = "" if expected == "keras3" else " [tf_keras]"
    assert do[0].startswith(f"Do: `{BUILT}` once, then `predict(x)` per call{twin} —")


def test_a_tf_function_is_advised_as_built_once_then_called() -> None:
    # #12: "Do: `tf.function(lambda …)(x)`" retraces on every call when pasted into a loop.
    result = _result(
        _m("predict", 0.100, call="model.predict(x)"),
        _m("tf.function", 0.002, call="tf.function(lambda x: model(x, training=False))(x)"),
        _m("tf.function", 0.0021, call="tf.function(...)(x)", flavour="tf_keras"),
    )
    do, _ = result.advice()
    assert do[0].startswith(f"Do: `{BUILT}` once, then `predict(x)` per call — 50× faster")
    assert "tf.function(lambda x: model(x, training=False))(x)" not in " ".join(do)


def _noisy(name: str, times: tuple[float, ...], **kw: object) -> MethodResult:
    from dataclasses import replace

    return replace(_m(name, 1.0, **kw), times_s=times)


def test_overlapping_intervals_recommend_nothing_and_no_flavour_switch() -> None:
    """Issue 35's run: tf_keras's tf.function step at 21 ms (IQR 19 ms) against Keras 3's
    30 ms (IQR 28 ms), every method noisy: "17x faster [tf_keras]" was advice on noise."""
    wide = (0.010, 0.016, 0.030, 0.045, 0.050)
    result = _result(
        _noisy("predict", wide),
        _noisy("predict_on_batch", tuple(t * 0.8 for t in wide)),
        _noisy(
            "tf.function (tf_keras)",
            tuple(t * 0.7 for t in wide),
            method="tf.function",
            flavour="tf_keras",
        ),
        _noisy("tf.function", wide[::-1], call="f(x)"),
    )
    rec = result.recommendation("inference")
    assert rec is not None and rec.method.flavour == "keras3"
    do, _ = result.advice()
    assert len(do) == 1 and "no reliable difference" in do[0], do
    assert not any("tf_keras" in line for line in do)


def test_a_twin_flavour_clearly_faster_beyond_the_noise_is_still_recommended() -> None:
    result = _result(
        _m("predict", 0.1),
        _m("tf.function", 0.05, call="f(x)"),
        _m("tf.function (tf_keras)", 0.01, method="tf.function", call="f(x)", flavour="tf_keras"),
    )
    rec = result.recommendation("inference")
    assert rec is not None and rec.method.flavour == "tf_keras"
