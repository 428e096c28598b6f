"""A Keras step's recompiles on JAX given a cause without JAX: the probe reads the shapes of
the arrays that reached the step from the call JAX traces (fake frames here, shaped like
jax 0.10's ``cache_miss(*args)`` in pjit.py), compares them with the step's previous
compilation's, and xla-compile-per-shape gives the Keras fix."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest
from synth import Node, make_report

import tfdiag.capture.jit as jit_probe
from tfdiag.advise.diagnosis import diagnose
from tfdiag.capture.jit import TRACE_EVENT, CompileRecorder, shape_change, traced_arguments
from tfdiag.records.jit import JitCompile
from tfdiag.records.report import CallInfo, Environment


def _array(*shape: int, dtype: str = "float32") -> Any:
    return SimpleNamespace(shape=shape, dtype=dtype)


def predict_step(state: Any, data: Any) -> None:  # the step's signature names the argument
    pass


def _frames(args: tuple[Any, ...], *, fun: Any = predict_step, depth: int = 3) -> Any:
    """JAX's ``cache_miss`` frame ``depth`` frames above the listener's."""
    frame = SimpleNamespace(
        f_code=SimpleNamespace(co_name="cache_miss", co_filename="/x/jax/_src/pjit.py"),
        f_locals={"args": args, "fun": fun},
        f_back=None,
    )
    for _ in range(depth):
        frame = SimpleNamespace(
            f_code=SimpleNamespace(co_name="_infer_params", co_filename="/x/jax/_src/pjit.py"),
            f_locals={},
            f_back=frame,
        )
    return frame


def test_the_traced_call_gives_each_argument_and_its_arrays() -> None:
    state = ([_array(4, 8), _array(8)], [])
    sig = traced_arguments(_frames((state, (_array(5, 4),))))
    assert sig == (("state", ("f32[4,8]", "f32[8]")), ("data", ("f32[5,4]",)))
    assert traced_arguments(_frames((), depth=80)) is None  # beyond the frames walked
    assert traced_arguments(None) is None


def test_a_changed_array_is_the_cause() -> None:
    before = (("state", ("f32[4,8]",)), ("data", ("f32[5,4]", "f32[5,1]")))
    now = (("state", ("f32[4,8]",)), ("data", ("f32[9,4]", "f32[9,1]")))
    assert shape_change(now, before) == {
        "cause": "shape",
        "argument": "data",
        "now": "f32[9,4]",
        "before": "f32[5,4]",
    }
    assert shape_change(before, before) is None
    cast = (("state", ("f32[4,8]",)), ("data", ("i32[5,4]", "f32[5,1]")))
    assert shape_change(cast, before)["cause"] == "dtype"  # type: ignore[index]


def test_the_recorder_guesses_only_what_jax_does_not_explain(monkeypatch: Any) -> None:
    sigs = iter([(("data", (f"f32[{n},4]",)),) for n in (32, 5, 9, 9)])
    monkeypatch.setattr(jit_probe, "traced_arguments", lambda frame: next(sigs))
    rec = CompileRecorder()
    for call in range(3):
        rec.call = call
        rec.on_duration(TRACE_EVENT, 0.1, fun_name="predict_step")
    first, second, third = rec.events
    assert first.cause == ""  # nothing to compare with yet
    assert (second.cause, second.argument, second.now, second.before) == (
        "shape",
        "data",
        "f32[5,4]",
        "f32[32,4]",
    )
    assert (third.now, third.before) == ("f32[9,4]", "f32[5,4]")
    # JAX's own explanation, when it comes, replaces the guess
    rec.on_log(
        "TRACING CACHE MISS at /home/me/serve.py:3 (serve):\n"
        "  for predict_step defined at /home/me/serve.py:1\n"
        "  never seen function:\n"
    )
    assert rec.events[2].cause == "first"


N = 5


def _serving(compiles: tuple[JitCompile, ...]) -> Any:
    user = "/home/me/serve.py"
    report = make_report(
        [Node(user, "serve", 0.1 * (N + 1), N + 1)], N, cold=[Node(user, "serve", 0.1)]
    )
    return dataclasses.replace(
        report,
        call=CallInfo("serve", method="serve", flavour="python"),
        environment=Environment(
            python="3.11", backend="jax", versions={"keras": "3.15.1", "jax": "0.10.2"}
        ),
        jit_compiles=compiles,
    )


@pytest.mark.parametrize(
    ("shapes", "says"),
    [
        (["f32[32,4]", "f32[5,4]", "f32[9,4]", "f32[17,4]"], "the batch size changes"),
        (["i32[8,12]", "i32[8,30]", "i32[8,7]", "i32[8,19]"], "dimension 1 changes"),
    ],
)
def test_a_keras_step_per_shape_is_xla_compile_per_shape_with_the_keras_fix(
    shapes: list[str], says: str
) -> None:
    compiles = tuple(
        JitCompile(
            i, "predict_step", "", 0, 0.01, 0.01, 0.05, "shape", "data", shapes[i], shapes[i - 1]
        )
        for i in range(1, len(shapes))
    ) + (JitCompile(0, "predict_step", trace_s=0.01, compile_s=0.05),)
    [first, *_] = diagnose(_serving(compiles)).findings
    assert first.id == "xla-compile-per-shape"
    assert any("Keras' jitted `predict_step` got `data`" in e and says in e for e in first.evidence)
    assert "bucket" in first.fix and "tf." not in first.fix
    # one remedy, for what changes: rows (a server's requests) or a sequence length
    rows = says == "the batch size changes"
    assert ("drop the padded rows' outputs" in first.fix) is rows
    assert ("pad_sequences" in first.fix) is not rows
    assert "drop_remainder" not in first.fix
