"""The CI guards' logic on synthetic records: which findings fail ``tfdiag_check`` by default,
the forbid/severity filter and its failure message, and ``max_traces``' count and causes."""

from __future__ import annotations

from dataclasses import replace

import pytest
from synth import SITE, keras3_predict_report, tensor, trace

from tfdiag.advise import FINDINGS
from tfdiag.advise.guards import (
    check_forbid,
    check_severity,
    counted_traces,
    forbidden,
    python_side_ids,
    retrace_fix,
    retraced,
)
from tfdiag.capture.guard import describe, failure_message
from tfdiag.capture.trace_limit import TooManyTraces, _message, max_traces
from tfdiag.records.errors import InputError

#: The retrace fix texts, by cause (the findings table's, whatever their words become).
RETRACE = next(s.fixes for s in FINDINGS if s.id == "per-iteration-tracing")


def test_the_default_forbids_the_steady_python_side_findings_only() -> None:
    ids = python_side_ids()
    assert {"per-call-input-pipeline", "per-iteration-tracing", "eager-execution"} <= set(ids)
    assert {"compute-bound", "build-dominated", "warmup", "spikes", "drift"}.isdisjoint(ids)
    steady = {s.id for s in FINDINGS if s.tier == "steady"}
    assert set(ids) == steady - {"spikes", "drift"}


def test_forbid_refuses_a_string_and_an_unknown_id() -> None:
    assert check_forbid(["per-iteration-tracing"]) == ("per-iteration-tracing",)
    with pytest.raises(InputError, match="list of finding ids"):
        check_forbid("per-iteration-tracing")
    with pytest.raises(InputError, match="'per-iteration-tracin' is not a finding id"):
        check_forbid(["per-iteration-tracin"])
    assert check_forbid(["mine"], extra=["mine"]) == ("mine",)
    with pytest.raises(InputError, match="severity"):
        check_severity("severe")


def test_forbidden_keeps_listed_ids_at_the_severity_or_above() -> None:
    report = keras3_predict_report()
    f = report.findings[0]
    assert f.id == "per-call-input-pipeline" and f.severity == "high"
    assert forbidden(report.findings, ["per-call-input-pipeline"]) == (f,)
    assert forbidden(report.findings, ["per-iteration-tracing"]) == ()
    low = replace(f, severity="low")
    assert forbidden([low], [f.id], "medium") == ()
    assert forbidden([low], [f.id], "low") == (low,)
    medium = replace(f, severity="medium")
    assert forbidden([medium], [f.id], "high") == ()


def test_the_failure_message_names_id_title_evidence_fix_and_the_report(tmp_path) -> None:
    report = keras3_predict_report()
    f = report.findings[0]
    text = failure_message(report, (f,), tmp_path / "t.tfdiag.json", None)
    assert "1 forbidden finding(s) in Model.predict (10 timed iterations" in text
    assert f"[high] {f.id}: {f.title}" in text
    assert all(f"evidence: {e}" in text for e in f.evidence)
    assert f"fix: {f.fix}" in text and "predict_on_batch" in text
    assert f"python -m tfdiag explain {tmp_path / 't.tfdiag.json'}" in text
    assert "report not saved: OSError: full" in failure_message(report, (f,), None, "OSError: full")
    evil = replace(f, evidence=("\x1b]0;title\x07 ok",))
    assert "\x1b" not in failure_message(report, (evil,), None, None)
    assert describe(f)[0].startswith("[high] per-call-input-pipeline")


# -- traces ------------------------------------------------------------------------------


def test_a_python_value_that_changes_is_named_with_its_argument_and_fix() -> None:
    events = [trace(0, (("i", f"Literal[{k}]"),)) for k in range(5)]
    (r,) = retraced(events, 1)
    assert (r.function, r.where, r.traces, r.variant) == ("step", "train.py:10", 5, "python-value")
    assert "argument `i` is a Python value that changes: 0, 1, 2, 3, …" in r.cause
    assert retrace_fix(r.variant) == RETRACE["python-value"]
    assert retraced(events, 5) == ()


def test_a_new_shape_names_the_dimension() -> None:
    events = [trace(0, (("x", tensor(n, 4)),)) for n in (8, 8, 3)]
    counted = counted_traces(events)
    assert len(counted[("step", "/home/me/train.py", 10, "")]) == 3
    (r,) = retraced(events, 2)
    assert r.variant == "shape" and "changes shape in dimension 0: 8, 8, 3" in r.cause
    assert retrace_fix("shape") == RETRACE["shape"]


def test_a_new_function_object_per_call_is_named() -> None:
    events = [trace(0, (("x", tensor(8, 4)),), function_id=k) for k in range(4)]
    (r,) = retraced(events, 1)
    assert r.variant == "new-function" and "4 different `tf.function` objects" in r.cause
    fix = retrace_fix("new-function")
    assert fix == RETRACE["new-function-alone"]  # no other finding is reported beside it


def test_the_second_trace_of_a_function_creating_variables_counts_once() -> None:
    """TensorFlow traces a function that creates variables twice on its first call, with an
    initialiser graph between (measured in TF 2.21: mk, initialize_variables, mk)."""
    x = (("x", tensor()),)
    init = trace(
        0, (), function="Function._initialize_uninitialized_variables.<locals>.initialize_variables"
    )
    events = [trace(0, x, function_id=1), init, trace(0, x, function_id=2)]
    assert retraced(events, 1) == ()
    assert retraced([*events, trace(0, (("x", tensor(3)),))], 1)[0].traces == 2


def test_tf_data_functions_are_told_apart_by_name_and_blamed_on_the_pipeline() -> None:
    """All of tf.data's functions are one wrapper in TensorFlow's source (as recorded from
    ``model.predict`` in TF 2.21); each ``predict`` on arrays builds its pipeline again."""
    wrapper = "StructuredFunctionWrapper.__init__.<locals>.trace_tf_function.<locals>.wrapped_fn"
    tf_file = SITE + "tensorflow/python/data/ops/structured_function.py"

    def data(name: str, spec: str, k: int):
        return trace(0, (("args_0", spec),), function=wrapper, file=tf_file, line=230, name=name)

    calls = [
        [data("Dataset_map_permutation", tensor(), k), data("Dataset_map_grab", tensor(8, 4), k)]
        for k in range(3)
    ]
    found = retraced([e for call in calls for e in call], 1)
    assert [(r.function, r.where, r.traces) for r in found] == [
        ("Dataset_map_permutation", "tf.data", 3),
        ("Dataset_map_grab", "tf.data", 3),
    ]
    assert (
        found[0].variant == "via-data" and "tf.data pipeline that is built again" in found[0].cause
    )
    assert retrace_fix("via-data") == RETRACE["via-data-alone"]
    assert retrace_fix("keras-nothing-known") == RETRACE["other"]


def test_functions_are_counted_apart_most_traces_first() -> None:
    a = [trace(0, (("i", f"Literal[{k}]"),), function="a", line=1) for k in range(3)]
    b = [trace(0, (("n", f"Literal[{k}]"),), function="b", line=2) for k in range(2)]
    once = [trace(0, (("x", tensor(2)),), function="c", line=3)]
    found = retraced([*b, *once, *a], 1)
    assert [(r.function, r.traces) for r in found] == [("a", 3), ("b", 2)]
    text = _message(1, found, dropped=7)
    assert "2 tf.function(s) traced more than 1 time(s) (tfdiag.max_traces(1))" in text
    assert "`a` (train.py:1) was traced 3×: argument `i`" in text
    assert f"fix: {RETRACE['python-value']}" in text
    assert "(7 more traces were not recorded)" in text


def test_too_many_traces_is_an_assertion_error() -> None:
    assert issubclass(TooManyTraces, AssertionError)
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InputError, match="max_traces takes"):
            max_traces(bad)  # type: ignore[arg-type]


def test_max_traces_refuses_what_it_cannot_check_as_a_decorator() -> None:
    """#32: on a generator or ``async def`` the wrapper's block closed before the body ran:
    five traces passed ``max_traces(1)``. Refused when decorated, before TensorFlow."""
    import tfdiag
    from tfdiag.records.errors import InputError

    def steps():  # type: ignore[no-untyped-def]
        yield 1

    async def step() -> None:
        return None

    async def agen():  # type: ignore[no-untyped-def]
        yield 1

    for func in (steps, step, agen):
        with pytest.raises(InputError, match="runs after the call returns"):
            tfdiag.max_traces(1)(func)
    plain = tfdiag.max_traces(1)(lambda: 3)
    assert callable(plain)


def test_a_forbidden_finding_is_confirmed_by_a_second_profile(monkeypatch) -> None:
    """One noisy profile does not fail the check; a finding on both profiles does, with the
    second profile's report; a finding the second profile adds alone is not a failure."""
    from types import SimpleNamespace

    from tfdiag.capture import guard

    slow = keras3_predict_report()
    clean_ = SimpleNamespace(findings=())
    f = slow.findings[0]
    both_new = SimpleNamespace(findings=(replace(f, id="eager-execution"),))
    runs: list[object] = []

    def fake(sequence):
        def profile_call(*a, **k):
            runs.append(1)
            return sequence.pop(0)

        return profile_call

    monkeypatch.setattr(guard, "profile_call", fake([slow, clean_]))
    assert guard.check_call(lambda: None) is clean_ and len(runs) == 2
    runs.clear()
    monkeypatch.setattr(guard, "profile_call", fake([clean_]))
    assert guard.check_call(lambda: None) is clean_ and len(runs) == 1
    second = keras3_predict_report()
    monkeypatch.setattr(guard, "profile_call", fake([slow, second]))
    with pytest.raises(guard.ForbiddenFinding) as err:
        guard.check_call(lambda: None)
    assert err.value.report is second and [g.id for g in err.value.findings] == [f.id]
    monkeypatch.setattr(guard, "profile_call", fake([slow, both_new]))
    assert guard.check_call(lambda: None) is both_new
