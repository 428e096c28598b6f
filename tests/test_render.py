"""The console view, rendered at a fixed width with no colour, on synthetic reports."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from synth import keras3_predict_report
from tf20_fixture import tf20_predict_stats

from tfdiag.advise.diagnosis import diagnosis_of
from tfdiag.records.units import fmt_s
from tfdiag.render.console import render_report
from tfdiag.results.load import report_from_stats


def _text(report, width: int = 110) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None).print(render_report(diagnosis_of(report)))
    return buf.getvalue()


def test_fmt_s_units() -> None:
    assert fmt_s(2.5) == "2.50 s"
    assert fmt_s(0.0123) == "12.3 ms"
    assert fmt_s(0.000045) == "45 µs"
    assert fmt_s(None) == "–"


def test_view_shows_call_timing_classes_breakdown_culprits_findings() -> None:
    report = keras3_predict_report(first_call_s=0.25, iteration_s=(0.05,) * 9 + (0.09,))
    text = _text(report)
    assert "called  Model.predict()" in text
    assert "TensorFlow 2.21.0 · Keras 3.15.1" in text
    assert "10 iterations + 1 cold call under cProfile" in text
    assert "50.0 ms per iteration, median of 10" in text
    assert "max 90.0 ms" in text
    assert "250.0 ms (cold call, under cProfile)" in text
    assert "per-iteration (k×N calls)" in text  # the seeds' classes
    assert "steady (10 calls)" in text  # the exact non-overlapping breakdown
    assert "input pipeline / data adapter" in text
    assert "array_data_adapter.py:ArrayDataAdapter.get_tf_dataset" in text
    assert "1. [high] per-call-input-pipeline" in text
    assert "Fix: `model.predict` builds a data pipeline" in text
    assert "For in-memory batches call `model.predict_on_batch(x)`" in " ".join(text.split())


def test_bare_prof_view_labels_its_fallback() -> None:
    report = report_from_stats(tf20_predict_stats(), name="seed.prof", iterations=None)
    text = _text(report, width=140)
    assert "% of runtime − build" in text
    assert "no cold-call snapshot" in text
    # Seeds' view: `_process_inputs` at 81 % of runtime minus build.
    culprits = text[text.index("Culprits") :]
    line = next(ln for ln in culprits.splitlines() if "training_v2:_process_inputs" in ln)
    assert "81." in line


def test_jupyter_shows_the_view_not_the_dataclass() -> None:
    report = report_from_stats(tf20_predict_stats(), name="seed.prof", iterations=None)
    bundle = report._repr_mimebundle_()
    assert "training_v2.py:_process_inputs" in bundle["text/plain"]
    assert bundle["text/html"].lstrip().startswith("<!DOCTYPE html>")
    assert "per-call-input-pipeline" in bundle["text/html"]


def _long_named_report() -> object:
    from synth import SITE, Node, make_report

    keras = SITE + "keras/src/trainers/"
    tf = SITE + "tensorflow/python/eager/polymorphic_function/"
    leaf = Node(
        tf + "polymorphic_function.py", "Function._get_concrete_function_garbage_collected", 0.3, 11
    )  # noqa: E501
    wrapper = Node(
        SITE + "tensorflow/python/data/ops/structured_function.py",
        "StructuredFunctionWrapper.__init__",
        0.2,
        11,
        children=[leaf],
    )
    init = Node(
        keras + "epoch_iterator.py", "TFEpochIterator.__init__", 0.1, 11, children=[wrapper]
    )
    root = Node(keras + "trainer.py", "TensorFlowTrainer.predict", 0.05, 11, children=[init])
    return make_report([root], 10)


def _identifiers(name: str) -> list[str]:
    """The identifiers of a function or op name: none may be broken across lines."""
    return [p for p in re.split(r"[^A-Za-z0-9_]+", name) if p]


@pytest.mark.parametrize("width", [80, 100, 120, 200])
def test_no_name_breaks_inside_an_identifier_at_any_width(width: int) -> None:
    # #12: names folded mid-word ("trainer.py:TFEpo" / "chIterator.__ini"); #18: then at word
    # boundaries ("array_data_" / "adapter:"), 3-5 lines a name, and TF ops mid-word.
    report = _long_named_report()
    text = report.render("text", width=width)  # type: ignore[attr-defined]
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    culprits = text[text.index("Culprits") :]
    words = set(re.findall(r"[A-Za-z0-9_]+", culprits))
    for row in report.analysis.culprits:  # type: ignore[attr-defined]
        for ident in _identifiers(row.name.replace(".py:", ":")):
            assert ident in words, (width, ident, culprits)


def test_a_narrow_view_puts_each_name_below_its_figures() -> None:
    report = _long_named_report()
    wide = report.render("text", width=200)  # type: ignore[attr-defined]
    narrow = report.render("text", width=80)  # type: ignore[attr-defined]
    name = "polymorphic_function:Function._get_concrete_function_garbage_collected"
    assert any(name in line and "graph-building" in line for line in wide.splitlines())
    row = next(n for n, line in enumerate(narrow.splitlines()) if line.strip() == name)
    assert "×" in narrow.splitlines()[row - 1]  # its calls/class figures right above it


def test_the_three_tables_of_the_view_share_one_width() -> None:
    report = _long_named_report()
    for width in (160, 200):
        text = report.render("text", width=width)  # type: ignore[attr-defined]
        rules = [line for line in text.splitlines() if line.strip().startswith("────")]
        assert len(rules) == 3 and len({len(r.rstrip()) for r in rules}) == 1, (width, rules)


def test_every_view_and_document_of_a_report_draws_on_one_diagnosis(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The diagnosis is computed once per report and handed to the renderers as a value
    (REVIEW §7.3): the console view, its brief form, the JSON and the HTML page analyse the
    record once between them."""
    from tfdiag.advise import diagnosis as diagnosis_module
    from tfdiag.results.report import Report

    calls = []
    analyze = diagnosis_module.analyze

    def counted(record):  # type: ignore[no-untyped-def]
        calls.append(record)
        return analyze(record)

    monkeypatch.setattr(diagnosis_module, "analyze", counted)
    report = Report.of(report_from_stats(tf20_predict_stats(), name="x.prof", iterations=None))
    for fmt in ("text", "json", "html"):
        report.render(fmt)
    report.render("text", brief=True)
    assert report.findings and report.analysis.total_s > 0
    assert len(calls) == 1


def test_a_big_speed_up_is_never_printed_as_zero_times_the_time() -> None:
    from tfdiag.records.units import fmt_ratio

    assert fmt_ratio(1 / 538) == "1/538×"  # was "0.00×", then "0.0019×"
    assert fmt_ratio(0.0099) == "1/101×"
    assert (fmt_ratio(0.03), fmt_ratio(1.07), fmt_ratio(12.5), fmt_ratio(162.0)) == (
        "0.03×",
        "1.07×",
        "12.5×",
        "162×",
    )


def test_the_header_names_the_jax_profiler_on_jax() -> None:
    from dataclasses import replace

    from tfdiag.render.header import header_rows

    report = keras3_predict_report(iteration_s=(0.02,) * 5 + (0.01,) * 5)
    report = replace(report, timing=replace(report.timing, traced=5))
    on_tf = dict(header_rows(report))["time"]
    assert "5 more under the TF profiler" in on_tf
    on_jax = replace(report, environment=replace(report.environment, backend="jax"))
    assert "5 more under the JAX profiler" in dict(header_rows(on_jax))["time"]
