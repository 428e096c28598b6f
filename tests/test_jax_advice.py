"""Keras on JAX without JAX: the compile probe's parsing and recording, its record's codec,
the backend in the environment, the fix texts' backend dimension, and the JAX detectors on
synthetic profiles shaped like the measured ones (tests/on_jax/ runs them on real JAX)."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from synth import SITE, Node, make_report

from tfdiag.advise import FINDINGS
from tfdiag.advise.diagnosis import diagnose
from tfdiag.advise.finding import CallKind, Detection
from tfdiag.advise.fixes.jax import USES_TF_DATA
from tfdiag.capture.jit import COMPILE_EVENT, LOWER_EVENT, TRACE_EVENT, CompileRecorder, explain
from tfdiag.records.jit import MAX_COMPILES, JitCompile
from tfdiag.records.report import CallInfo, Environment, RunRecord
from tfdiag.records.report_json import run_record_from_json, run_record_to_json
from tfdiag.render.flavour import flavour_label

N = 5
TRAINER = SITE + "keras/src/backend/jax/trainer.py"
CALLBACKS = SITE + "keras/src/callbacks/callback_list.py"
JAX_ENV = Environment(
    python="3.11", backend="jax", versions={"keras": "3.15.1", "jax": "0.10.2", "jaxlib": "0.10.2"}
)


def findings_of(record: RunRecord) -> tuple[Any, ...]:
    return diagnose(record).findings


#: TensorFlow-only names a fix on JAX must not give.
TF_ONLY = re.compile(
    r"\btf\.\w+|GradientTape|TensorSpec|input_signature|reduce_retracing|autograph|tf_keras"
)

_STATIC = """TRACING CACHE MISS at /home/me/train.py:15:19 (<module>):
  for update defined at /home/me/train.py:12
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][1], now <class 'jax._src.tree_util.Static'> with pytree metadata \
Static(val=7) and before <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=0), \
so the pytree node metadata does not match"""
_STATIC_VS_LEAF = """TRACING CACHE MISS at /home/me/train.py:92:41 (train):
  for step_body defined at /home/me/train.py:55
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][4], now <class 'jax._src.tree_util.Static'> and before pytree leaf, so \
their Python types differ"""
_SHAPE = """TRACING CACHE MISS at /home/me/train.py:18:16 (<module>):
  for f defined at /home/me/train.py:16
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[3] and before f32[2]"""
_NEW = """TRACING CACHE MISS at /home/me/train.py:18:16 (<module>):
  never seen function:
    f id=139872150062400 defined at /home/me/train.py:16"""


@pytest.mark.parametrize(
    ("message", "cause", "argument", "now", "before"),
    [
        (_STATIC, "static", "positional argument 1", "7", "0"),
        (_STATIC_VS_LEAF, "static", "positional argument 4", "", "pytree leaf"),
        (_SHAPE, "shape", "x", "f32[3]", "f32[2]"),
        (_SHAPE.replace("f32[3]", "i32[2]"), "dtype", "x", "i32[2]", "f32[2]"),
        (_SHAPE.replace("f32[3]", "f32[2]{weak_type=True}"), "weak-type", "x", "", ""),
        (_NEW, "first", "", "", ""),
    ],
)
def test_jax_cache_miss_explanations_are_read(
    message: str, cause: str, argument: str, now: str, before: str
) -> None:
    why = explain(message)
    assert why is not None
    assert why["cause"] == cause
    assert why["argument"] == argument
    assert why["file"] == "/home/me/train.py"
    if now:
        assert (why["now"], why["before"]) == (now, before)


def test_other_log_lines_are_not_explanations() -> None:
    assert explain("Finished tracing + transforming f for pjit in 0.01 sec") is None


def _recorded(log_first: bool) -> list[JitCompile]:
    rec = CompileRecorder()
    rec.call = 2
    if log_first:
        rec.on_log(_STATIC)
    rec.on_duration(TRACE_EVENT, 0.01, fun_name="update")
    if not log_first:
        rec.on_log(_STATIC)
    rec.on_duration(LOWER_EVENT, 0.02, fun_name="jit(update)")
    rec.on_duration(COMPILE_EVENT, 0.07, fun_name="jit(update)")
    rec.on_duration("/jax/some/other_event", 1.0, fun_name="x")
    return rec.events


@pytest.mark.parametrize("log_first", [True, False])
def test_one_compilation_is_one_record_whatever_order_jax_reports_it_in(log_first: bool) -> None:
    [c] = _recorded(log_first)
    assert (c.call, c.function, c.cause, c.now, c.before) == (2, "update", "static", "7", "0")
    assert c.seconds == pytest.approx(0.10)
    assert (c.file, c.line) == ("/home/me/train.py", 12)


def test_the_recorder_keeps_at_most_max_compiles_and_never_raises() -> None:
    rec = CompileRecorder()
    for _ in range(MAX_COMPILES + 3):
        rec.on_duration(TRACE_EVENT, 0.001, fun_name="f")
    rec.on_duration(TRACE_EVENT, "not a number", fun_name="f")  # type: ignore[arg-type]
    assert len(rec.events) == MAX_COMPILES
    assert rec.dropped == 4


def test_jit_compiles_and_the_backend_survive_the_json_round_trip() -> None:
    report = make_report([Node("/home/me/train.py", "train", 0.1, N + 1)], N)
    compiles = tuple(_recorded(True)) + (JitCompile(0, "f", cause="first"),)
    record = dataclasses.replace(report, environment=JAX_ENV, jit_compiles=compiles)
    back = run_record_from_json(json.loads(json.dumps(run_record_to_json(record))), RunRecord)
    assert back.jit_compiles == compiles
    assert back.environment == JAX_ENV
    assert back.environment.framework == "jax"


def test_the_environment_says_what_ran() -> None:
    assert JAX_ENV.stack() == ["Keras 3.15.1", "jax 0.10.2", "jaxlib 0.10.2"]
    assert Environment(versions={"jax": "0.10.2"}).framework == "jax"
    assert Environment(versions={"tensorflow": "2.21.0", "jax": "0.10.2"}).framework == "tensorflow"
    assert Environment().framework is None
    call = CallInfo("Functional.predict", flavour="keras3")
    assert flavour_label(call, JAX_ENV) == "Keras 3 on JAX"
    assert flavour_label(call, Environment(versions={"tensorflow": "2.21.0"})) == "Keras 3"


# -- the fix texts' backend dimension ---------------------------------------------------


def test_a_finding_with_a_jax_text_never_falls_back_to_tensorflow_on_jax() -> None:
    spec = next(s for s in FINDINGS if s.id == "per-iteration-tracing")
    d = Detection(0.5, (), variant="via-data")  # a TF-only variant, no jax: text
    assert spec.fix_for(d, CallKind.OTHER, backend="jax") == spec.fixes["jax:other"]
    assert spec.fix_for(d, CallKind.OTHER) == spec.fixes["via-data"]
    static = Detection(0.5, (), variant="static", values={"function": "update"})
    assert "static_argnums" in spec.fix_for(static, CallKind.OTHER, backend="jax")


#: Findings whose detectors read TensorFlow-only evidence (the TF profiler's Python ops and
#: XLA events): they cannot fire on a JAX program.
_TF_ONLY_FINDINGS = {"python-in-graph"}


@pytest.mark.parametrize("spec", FINDINGS, ids=lambda s: s.id)
def test_no_fix_on_jax_names_a_tensorflow_only_api(spec: Any) -> None:
    jax_texts = {k: v for k, v in spec.fixes.items() if k.startswith("jax:")}
    own_tf_data = {f"jax:{k}" for k in USES_TF_DATA.get(spec.id, ())}  # the user's tf.data
    assert not [k for k, v in jax_texts.items() if TF_ONLY.search(v) and k not in own_tf_data]
    assert not TF_ONLY.search(spec.title_for("jax"))
    if "jax:other" in spec.fixes or spec.id in _TF_ONLY_FINDINGS:
        return
    # the plain texts a run on JAX can reach: those with no jax: text of their own
    reachable = {
        k: v for k, v in spec.fixes.items() if ":" not in k and f"jax:{k}" not in jax_texts
    }
    assert not [k for k, v in reachable.items() if TF_ONLY.search(v)], spec.id


# -- the detectors on JAX-shaped profiles --------------------------------------------------


def _jax_predict(*, pool_s: float, step_s: float, wait_s: float = 0.0) -> RunRecord:
    """A Keras-on-JAX ``predict`` × N: its callback thread pool, its jitted step, the wait
    for the step's results in the pool's flush."""

    def tree(n: int) -> Node:
        hooks = Node(
            CALLBACKS,
            "CallbackList.on_predict_batch_end",
            0.0,
            n,
            [Node(CALLBACKS, "CallbackList._async_dispatch", pool_s * n, n)],
        )
        end = Node(
            CALLBACKS,
            "CallbackList.on_predict_end",
            0.0,
            n,
            [Node(CALLBACKS, "CallbackList._flush_futures", wait_s * n, n)],
        )
        step = Node(TRAINER, "JAXTrainer._make_function.<locals>.iterator_step", step_s * n, n)
        return Node(TRAINER, "JAXTrainer.predict", 0.0, n, [hooks, step, end])

    report = make_report([tree(N + 1)], N, cold=[tree(1)])
    return dataclasses.replace(report, environment=JAX_ENV)


def test_keras_callback_pool_on_jax_is_per_call_set_up_not_callbacks() -> None:
    """Seed 003's predict on JAX led with callback-overhead 85 % (no callbacks at all)."""
    found = findings_of(_jax_predict(pool_s=0.008, step_s=0.0005))
    ids = [f.id for f in found]
    assert ids[0] == "per-call-input-pipeline"
    assert "callback-overhead" not in ids
    assert "predict_on_batch" in found[0].fix and "stateless_call" in found[0].fix
    assert not TF_ONLY.search(found[0].title + found[0].fix)


def test_the_wait_for_the_results_is_compute_not_set_up() -> None:
    """A large conv predict: Python waits for the asynchronously run program in the pool's
    flush; that is the model's compute (compute-bound), not per-call set-up."""
    found = findings_of(_jax_predict(pool_s=0.001, step_s=0.0005, wait_s=0.2))
    assert [f.id for f in found][0] == "compute-bound"
    assert "won't help" in found[0].fix
    assert "per-call-input-pipeline" not in [f.id for f in found]


def _jax_fit_with_a_batch_end_callback(*, wait_s: float, user_s: float = 0.0) -> RunRecord:
    """A Keras-on-JAX ``fit`` with a callback that overrides ``on_train_batch_end``: the pool
    is off, and Keras' hook makes the logs Python floats on the main thread, which waits
    there (``convert_to_numpy``) for the asynchronously run step; ``user_s``: the user's
    callback's own work per batch."""
    core = SITE + "keras/src/backend/jax/core.py"
    utils = SITE + "keras/src/utils/python_utils.py"

    def tree(n: int) -> Node:
        logs = Node(
            utils, "pythonify_logs", 0.0001 * n, n, [Node(core, "convert_to_numpy", wait_s * n, n)]
        )
        user = Node("/home/me/train.py", "Watch.on_train_batch_end", user_s * n, n)
        hooks = Node(CALLBACKS, "CallbackList.on_train_batch_end", 0.0, n, [logs, user])
        step = Node(TRAINER, "JAXTrainer._make_function.<locals>.iterator_step", 0.0005 * n, n)
        return Node(TRAINER, "JAXTrainer.fit", 0.0, n, [hooks, step])

    report = make_report([tree(N + 1)], N, cold=[tree(1)], method="fit")
    return dataclasses.replace(report, environment=JAX_ENV)


def test_the_wait_in_keras_batch_end_logs_is_compute_not_callbacks() -> None:
    """A healthy large fit under ProfileCallback (or `tfdiag run`, which adds it) led with
    callback-overhead 72 % and conversion-overhead 70 %: the step's compute, waited for in
    Keras' own logs conversion."""
    ids = [f.id for f in findings_of(_jax_fit_with_a_batch_end_callback(wait_s=0.05))]
    assert ids[0] == "compute-bound", ids
    assert "callback-overhead" not in ids and "conversion-overhead" not in ids
    # the user's own callback work beside that wait is still the callbacks'
    slow = findings_of(_jax_fit_with_a_batch_end_callback(wait_s=0.05, user_s=0.2))
    callbacks = [f for f in slow if f.id == "callback-overhead"]
    assert callbacks and callbacks[0].impact > 0.5, [(f.id, f.impact) for f in slow]


def _model_called_directly(*, ops: int, layer_python_s: float) -> RunRecord:
    """The user's loop calls a Keras model directly on JAX (``model(x)``, through Keras'
    traceback filter), ``ops`` primitives dispatched per iteration under it."""
    wrapper = SITE + "keras/src/utils/traceback_utils.py"
    layer = SITE + "keras/src/layers/layer.py"
    dispatch = SITE + "jax/_src/dispatch.py"

    def tree(n: int) -> Node:
        prims = Node(dispatch, "apply_primitive", 0.00001 * ops * n, ops * n)
        call = Node(layer, "Layer.__call__", layer_python_s * n, n, [prims])
        wrapped = Node(wrapper, "filter_traceback.<locals>.error_handler", 0.0, n, [call])
        return Node("/home/me/serve.py", "score", 0.0001 * n, n, [wrapped])

    report = make_report([tree(N + 1)], N, cold=[tree(1)], method="score")
    return dataclasses.replace(report, environment=JAX_ENV)


def test_a_model_called_directly_on_jax_is_eager_execution_with_a_jitted_forward() -> None:
    found = findings_of(_model_called_directly(ops=100, layer_python_s=0.01))
    assert found[0].id == "eager-execution", [f.id for f in found]
    assert "stateless_call" in found[0].fix and "serve.py:score" in found[0].fix
    assert not TF_ONLY.search(found[0].fix)
    # a few ops under a cheap call is not a finding
    few = findings_of(_model_called_directly(ops=3, layer_python_s=0.00001))
    assert "eager-execution" not in [f.id for f in few]


def _ops_from_user_code(*, ops: int, python_s: float) -> RunRecord:
    """The user's own function runs ``ops`` JAX ops per iteration from Python (``keras.ops``
    on rows of an array, through ``jnp``'s wrappers), no model or Keras step under it."""
    dispatch = SITE + "jax/_src/dispatch.py"
    array = SITE + "jax/_src/array.py"

    def tree(n: int) -> Node:
        prims = Node(dispatch, "apply_primitive", 0.00001 * ops * n, ops * n)
        item = Node(array, "ArrayImpl.__getitem__", python_s * n, ops // 2 * n, [prims])
        return Node("/home/me/metrics.py", "per_sample_mae", 0.0001 * n, n, [item])

    report = make_report([tree(N + 1)], N, cold=[tree(1)], method="per_sample_mae")
    return dataclasses.replace(report, environment=JAX_ENV)


def test_jax_ops_run_one_by_one_from_the_users_code_are_eager_execution() -> None:
    """Per-row metric code on JAX (``ops.mean(ops.abs(pred[i] - target[i]))`` in a loop): a
    TensorFlow counter saw nothing, and it was "no known slow pattern"."""
    found = findings_of(_ops_from_user_code(ops=1600, python_s=0.05))
    first = found[0]
    assert first.id == "eager-execution", [f.id for f in found]
    assert any("1600 JAX ops dispatched one at a time" in e for e in first.evidence)
    assert not TF_ONLY.search(first.fix)
    few = findings_of(_ops_from_user_code(ops=4, python_s=0.00001))
    assert "eager-execution" not in [f.id for f in few]


def _jax_predict_steps(*, steps: int, wait_s: float, python_s: float) -> RunRecord:
    """One ``predict`` of ``steps`` batches on JAX: per step Keras' Python (``python_s``)
    and the wait for the jitted program's results (``wait_s``: its compute)."""

    def tree(n: int) -> Node:
        m = steps * n
        wait = Node(SITE + "jax/_src/array.py", "ArrayImpl._value", wait_s * m, m)
        step = Node(TRAINER, "JAXTrainer._make_function.<locals>.iterator_step", 0.0001 * m, m)
        python = Node(TRAINER, "JAXTrainer._predict_loop_python", python_s * m, m)
        return Node(TRAINER, "JAXTrainer.predict", 0.0, n, [wait, step, python])

    report = make_report([tree(N + 1)], N, cold=[tree(1)], kwargs=(("batch_size", "1024"),))
    return dataclasses.replace(report, environment=JAX_ENV)


def test_on_jax_a_steps_work_is_read_off_jax_not_a_tensorflow_counter() -> None:
    """A large predict on JAX (20 batches of 1024, XLA busy 92 %) was "per-step overhead:
    the model's own work is 0 % (TFE_Py_Execute's time)": a TensorFlow counter, zero on
    JAX, and "pass a larger batch_size (e.g. batch_size=1024)" to a call passing 1024."""
    heavy = findings_of(_jax_predict_steps(steps=20, wait_s=0.009, python_s=0.0005))
    assert "per-step-overhead" not in [f.id for f in heavy], [f.id for f in heavy]
    from tfdiag.advise.calls import _larger

    # where the finding stands, its example batch is never the size already passed
    assert [_larger(b) for b in ("1024", "32", None, "x")] == ["4096", "1024", "1024", "1024"]


def test_on_tensorflow_the_same_profile_keeps_its_tensorflow_texts() -> None:
    record = dataclasses.replace(
        _jax_predict(pool_s=0.008, step_s=0.0005), environment=Environment()
    )
    assert all("jax" not in f.fix for f in findings_of(record))


def _jit_loop(compiles: tuple[JitCompile, ...]) -> RunRecord:
    user = "/home/me/train.py"
    report = make_report(
        [Node(user, "train", 0.1 * (N + 1), N + 1)], N, cold=[Node(user, "train", 0.1)]
    )
    return dataclasses.replace(
        report,
        call=CallInfo("train", method="train", flavour="python"),
        environment=Environment(python="3.11", versions={"jax": "0.10.2"}),
        jit_compiles=compiles,
    )


def test_a_static_argument_that_changes_is_per_iteration_tracing_with_the_jax_fix() -> None:
    compiles = (
        JitCompile(0, "update", "/home/me/train.py", 12, 0.01, 0.01, 0.05, "first"),
    ) + tuple(
        JitCompile(
            i, "update", "/home/me/train.py", 12, 0.01, 0.01, 0.05, "static", "step", str(i), "0"
        )
        for i in range(1, N + 1)
    )
    [first, *_] = findings_of(_jit_loop(compiles))
    assert first.id == "per-iteration-tracing"
    assert "A jitted function is traced and compiled again" in first.title
    assert "static_argnums" in first.fix and "traced as an array" in first.fix
    assert any("`step` is a static argument" in e for e in first.evidence)
    # one cause, said once: not also "JAX did not say why" beside JAX's own explanation
    assert not any("did not say why" in e for e in first.evidence), first.evidence


def test_a_positional_argument_jax_names_by_number_is_named_as_the_signature_does() -> None:
    """JAX explains "at positional argument 1"; the evidence and fix then read "positional
    argument 1 is a static argument" where the user wrote ``scale``. The trace event's
    frame holds the signature (``cache_miss``'s ``fun``): the recorder names it."""
    rec = CompileRecorder()
    rec._params["update"] = ("state", "step")
    rec.call = 2
    rec.on_duration(TRACE_EVENT, 0.01, fun_name="update")
    rec.on_log(_STATIC)
    assert [e.argument for e in rec.events] == ["step"]
    rec._params["update"] = ("state",)  # a signature without it: JAX's words are kept
    rec.on_duration(TRACE_EVENT, 0.01, fun_name="update")
    rec.on_log(_STATIC)
    assert rec.events[-1].argument == "positional argument 1"


def test_one_compile_in_the_first_call_only_is_no_finding() -> None:
    compiles = (JitCompile(0, "update", trace_s=0.01, compile_s=0.05, cause="first"),)
    assert "per-iteration-tracing" not in [f.id for f in findings_of(_jit_loop(compiles))]


def test_a_function_jitted_anew_each_call_is_a_new_function() -> None:
    compiles = tuple(
        JitCompile(i, "step", "/home/me/train.py", 3, 0.02, 0.0, 0.05, "first")
        for i in range(N + 1)
    )
    first, then = findings_of(_jit_loop(compiles))[:2]
    assert (first.id, then.id) == ("model-rebuilt-per-call", "per-iteration-tracing")
    assert "once, outside the loop" in first.fix


def test_a_new_input_shape_per_call_is_xla_compile_per_shape_with_padding() -> None:
    compiles = tuple(
        JitCompile(
            i,
            "forward",
            "/home/me/serve.py",
            9,
            0.01,
            0.01,
            0.08,
            "shape",
            "x",
            f"f32[{n},24]",
            "f32[8,24]",
        )
        for i, n in enumerate((8, 297, 473, 277, 611, 90))
    )
    [first, *rest] = findings_of(_jit_loop(compiles))
    assert first.id == "xla-compile-per-shape"
    assert "pad" in first.fix and "bucket" in first.fix and "`x`" in first.fix
    assert "per-iteration-tracing" not in [f.id for f in rest]
    assert not TF_ONLY.search(first.fix)


def test_a_keras_step_run_as_python_on_jax_is_eager_execution() -> None:
    dispatch = SITE + "jax/_src/dispatch.py"

    def tree(n: int) -> Node:
        ops = Node(dispatch, "apply_primitive", 0.00001 * 200 * n, 200 * n)
        body = Node(TRAINER, "JAXTrainer.train_step", 0.02 * n, n, [ops])
        step = Node(TRAINER, "JAXTrainer._make_function.<locals>.iterator_step", 0.0, n, [body])
        return Node(TRAINER, "JAXTrainer.fit", 0.001 * n, n, [step])

    report = make_report(
        [tree(N + 1)], N, cold=[tree(1)], method="fit", facts=(("run_eagerly", "True"),)
    )
    [first, *_] = findings_of(dataclasses.replace(report, environment=JAX_ENV))
    assert first.id == "eager-execution"
    assert "run_eagerly=True" in first.fix and "jitted XLA program" in first.fix


def test_keras_on_pytorch_gets_one_line_and_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyTorch is detected (Keras 3's backend) and said not diagnosed; no built-in finding
    is made on it, whatever its profile looks like."""
    import tfdiag
    from tfdiag.capture import environment

    monkeypatch.setattr(environment, "keras_backend", lambda: "torch")
    report = tfdiag.profile(sum, range(20_000), iterations=3, tf_profiler=False)
    assert report.environment.backend == "torch"
    assert report.findings == ()
    [line] = [n for n in report.notes if "PyTorch" in n]
    assert "not diagnosed yet" in line
    text = report.render("text", width=400)
    assert "Keras 3 on the PyTorch backend is not diagnosed yet" in text
    assert "No findings" not in text
    torch = dataclasses.replace(
        _jax_predict(pool_s=0.008, step_s=0.0005), environment=Environment(backend="torch")
    )
    assert findings_of(torch) == ()


@pytest.mark.parametrize(
    ("backend", "on"), [("jax", False), ("torch", False), ("tensorflow", True)]
)
def test_tensorflow_hooks_stay_off_on_another_keras_backend_even_with_tensorflow_loaded(
    monkeypatch: pytest.MonkeyPatch, backend: str, on: bool
) -> None:
    """A Keras-on-JAX program that loads TensorFlow (tf.data, clone_model) is no TF program."""
    import sys
    import types

    from tfdiag.capture import tracers
    from tfdiag.capture.tfprofiler import TfTrace

    monkeypatch.setitem(
        sys.modules, "tensorflow", sys.modules.get("tensorflow") or types.ModuleType("tensorflow")
    )
    monkeypatch.setattr(tracers, "running_backend", lambda: backend)
    assert (tracers.tracer_in_use() is TfTrace) is on
    assert tracers.tracer_for(backend) is (tracers.JaxTrace if backend == "jax" else TfTrace)


def test_a_keras_step_run_as_python_with_unknown_settings_names_both_that_do_it() -> None:
    """Profiled through the user's own function, the record does not show the model's
    compile settings: the fix names the two that make Keras skip `jax.jit` (trainer.py jits
    exactly when `not run_eagerly and jit_compile`), not one it cannot see."""
    dispatch = SITE + "jax/_src/dispatch.py"

    def tree(n: int) -> Node:
        ops = Node(dispatch, "apply_primitive", 0.00001 * 200 * n, 200 * n)
        body = Node(TRAINER, "JAXTrainer.train_step", 0.02 * n, n, [ops])
        step = Node(TRAINER, "JAXTrainer._make_function.<locals>.iterator_step", 0.0, n, [body])
        return Node(TRAINER, "JAXTrainer.fit", 0.001 * n, n, [step])

    report = make_report([tree(N + 1)], N, cold=[tree(1)], method="fit")
    [first, *_] = findings_of(dataclasses.replace(report, environment=JAX_ENV))
    assert first.id == "eager-execution"
    assert "`run_eagerly=False`" in first.fix and "`jit_compile=True`" in first.fix
    assert "is compiled with `run_eagerly=True`" not in first.fix
