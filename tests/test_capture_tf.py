"""The capture hooks on real TensorFlow: the graph-trace recorder, the Python-callback hook,
the facts read off a call's objects, and a profile whose retracing cause they name."""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

import tfdiag
from tfdiag.capture import pycalls, traces
from tfdiag.capture.facts import call_facts
from tfdiag.capture.pycalls import CallbackRecorder, hooked, install
from tfdiag.capture.traces import TraceRecorder, recording

pytestmark = pytest.mark.tf

FLAVOURS = ("keras3", "tf_keras")


@pytest.fixture(scope="module")
def tf() -> Any:
    import tensorflow

    return tensorflow


def _spec(shape: str, dtype: str = "float32") -> str:
    return f"TensorSpec(shape={shape}, dtype=tf.{dtype}, name=None)"


# -- the trace recorder ----------------------------------------------------------------------


def test_a_trace_records_the_function_its_source_and_its_parameter_types(tf: Any) -> None:
    def scale(x: Any, factor: Any) -> Any:
        return x * factor

    line = scale.__code__.co_firstlineno
    step = tf.function(scale)
    recorder = TraceRecorder()
    with recording(recorder) as on:
        assert on
        recorder.call = 1
        step(tf.ones((2, 3)), 3)
        step(tf.zeros((2, 3)), 3)  # the same signature: its graph is reused, no trace
        recorder.call = 2
        step(tf.ones((2, 3)), 4)
        step(tf.ones((5,), tf.int32), 4)
    assert [(e.call, e.params) for e in recorder.events] == [
        (1, (("x", _spec("(2, 3)")), ("factor", "Literal[3]"))),
        (2, (("x", _spec("(2, 3)")), ("factor", "Literal[4]"))),
        (2, (("x", _spec("(5,)", "int32")), ("factor", "Literal[4]"))),
    ]
    first = recorder.events[0]
    assert first.function.endswith("<locals>.scale")
    assert (first.file, first.line, first.name) == (__file__, line, "scale")
    # One tf.function object: one id; another object of the same Python function: another.
    assert len({e.function_id for e in recorder.events}) == 1
    with recording(recorder):
        tf.function(scale)(tf.ones((2, 3)), 3)
    assert recorder.events[-1].function_id != first.function_id


def test_tf_data_functions_are_recorded_as_tf_datas(tf: Any) -> None:
    recorder = TraceRecorder()
    with recording(recorder):
        tf.data.Dataset.range(4).map(lambda v: v * 2)
    (event,) = recorder.events
    assert event.name.startswith("Dataset_map")
    assert "StructuredFunctionWrapper" in event.function
    assert event.params == (("args_0", _spec("()", "int64")),)


def test_the_tracer_is_restored_after_the_block_even_when_it_raises(tf: Any) -> None:
    module = sys.modules[traces._MODULE]
    original = getattr(module, traces._TARGET)
    recorder = TraceRecorder()
    with recording(recorder):
        assert getattr(module, traces._TARGET) is not original
    assert getattr(module, traces._TARGET) is original
    with pytest.raises(RuntimeError, match="user bug"), recording(recorder):
        raise RuntimeError("user bug")
    assert getattr(module, traces._TARGET) is original
    tf.function(lambda x: x + 1)(tf.constant(1.0))  # traced after the blocks: not recorded
    assert recorder.events == []


def test_a_full_recorder_counts_what_it_drops(tf: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(traces, "MAX_TRACES", 2)
    recorder = TraceRecorder()
    step = tf.function(lambda x, n: x * n)
    with recording(recorder):
        for n in range(4):
            step(tf.constant(1.0), n)
    assert len(recorder.events) == 2 and recorder.dropped == 2


def test_without_tensorflows_tracer_nothing_is_recorded(
    tf: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, traces._MODULE)
    with recording(TraceRecorder()) as on:
        assert not on


# -- the Python-callback hook ----------------------------------------------------------------


def _registry_call(tf: Any) -> Callable[..., Any]:
    from tensorflow.python.ops import script_ops

    call: Callable[..., Any] = vars(script_ops.FuncRegistry)["__call__"]
    return call


def test_a_py_function_in_a_dataset_map_is_timed_with_its_calls(tf: Any) -> None:
    def slow_double(v: Any) -> Any:
        time.sleep(0.002)
        return v * 2

    line = slow_double.__code__.co_firstlineno
    ds = tf.data.Dataset.range(6).map(lambda v: tf.py_function(slow_double, [v], tf.int64))
    recorder = CallbackRecorder()
    with hooked(recorder) as on:
        assert on
        assert [int(v) for v in ds] == [0, 2, 4, 6, 8, 10]
    (record,) = recorder.records()
    assert record.function.endswith("<locals>.slow_double")
    assert (record.file, record.line, record.kind) == (__file__, line, "py_function")
    assert record.calls == 6
    assert record.seconds >= 6 * 0.002


def test_python_ops_in_a_tf_function_are_timed_per_function(tf: Any) -> None:
    def plus_one(v: Any) -> Any:
        return v + 1

    def halve(v: Any) -> Any:
        time.sleep(0.001)
        return v / 2

    @tf.function
    def step(x: Any) -> Any:
        return tf.numpy_function(plus_one, [x], tf.float32) + tf.py_function(halve, [x], tf.float32)

    step(tf.constant(1.0))  # traced outside the hook: only calls are counted
    recorder = CallbackRecorder()
    with hooked(recorder):
        for _ in range(3):
            assert float(step(tf.constant(4.0))) == 7.0
    by_name = {r.function.rsplit(".", 1)[-1]: r for r in recorder.records()}
    assert set(by_name) == {"plus_one", "halve"}
    assert (by_name["plus_one"].kind, by_name["plus_one"].calls) == ("numpy_function", 3)
    assert (by_name["halve"].kind, by_name["halve"].calls) == ("py_function", 3)
    assert by_name["halve"].seconds >= 3 * 0.001
    assert recorder.records()[0].function.endswith("halve")  # heaviest first


def test_the_registry_is_restored_after_the_block_even_when_it_raises(tf: Any) -> None:
    original = _registry_call(tf)
    recorder = CallbackRecorder()
    with hooked(recorder):
        assert _registry_call(tf) is not original
    assert _registry_call(tf) is original
    with pytest.raises(RuntimeError, match="user bug"), hooked(recorder):
        raise RuntimeError("user bug")
    assert _registry_call(tf) is original
    restore = install(recorder)
    assert restore is not None and _registry_call(tf) is not original
    restore()
    assert _registry_call(tf) is original
    tf.py_function(lambda v: v, [tf.constant(1.0)], tf.float32)  # after: not recorded
    assert recorder.records() == ()


def test_a_paused_recorder_records_nothing_and_the_python_still_runs(tf: Any) -> None:
    recorder = CallbackRecorder()
    recorder.active = False
    with hooked(recorder):
        out = tf.py_function(lambda v: v * 3, [tf.constant(2.0)], tf.float32)
    assert float(out) == 6.0
    assert recorder.records() == ()


def test_without_tensorflows_registry_nothing_is_hooked(
    tf: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, pycalls._MODULE)
    assert install(CallbackRecorder()) is None
    with hooked(CallbackRecorder()) as on:
        assert not on


def test_a_generators_python_is_named_as_the_generator(tf: Any) -> None:
    def numbers() -> Any:
        yield from range(4)

    ds = tf.data.Dataset.from_generator(numbers, output_signature=tf.TensorSpec((), tf.int64))
    recorder = CallbackRecorder()
    with hooked(recorder):
        assert [int(v) for v in ds] == [0, 1, 2, 3]
    named = [r for r in recorder.records() if r.kind == "generator"]
    assert [r.function.rsplit(".", 1)[-1] for r in named] == ["numbers"], recorder.records()
    # One call per element, one that finds it exhausted, and tf.data's id and finalize calls
    # (the same generator's).
    assert named[0].calls == 7, recorder.records()


# -- facts -----------------------------------------------------------------------------------


def _model(flavour: str, **compile_kwargs: Any) -> Any:
    from tfdiag.measure.seed_models import tiny_model

    model = tiny_model(flavour, compiled=False)
    model.compile("adam", "binary_crossentropy", **compile_kwargs)
    return model


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_models_execution_settings_are_read(flavour: str, tiny_data: Any) -> None:
    x = tiny_data[0]
    model = _model(flavour, run_eagerly=True, steps_per_execution=4, jit_compile=False)
    facts = dict(call_facts(model.fit, (x,), {}))
    assert facts.pop("dynamic", "False") == "False"  # tf_keras: no layer built dynamic=True
    assert {k: v for k, v in facts.items() if not k.startswith("metric.")} == {
        "functions_run_eagerly": "False",
        "run_eagerly": "True",
        "run_eagerly_set": "True",  # set by the user's compile(), not Keras' default
        "steps_per_execution": "4",
        "jit_compile": "False",
    }
    default = dict(call_facts(_model(flavour).predict, (x,), {}))
    assert (default["run_eagerly"], default["steps_per_execution"]) == ("False", "1")
    # The model called directly is the model too.
    assert dict(call_facts(model, (x,), {}))["run_eagerly"] == "True"


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_the_callbacks_classes_and_frequency_settings_are_read(
    flavour: str, tiny_data: Any, tmp_path: Any
) -> None:
    keras = pytest.importorskip("keras" if flavour == "keras3" else "tf_keras")
    name = "w.weights.h5" if flavour == "keras3" else "w.h5"
    given = [
        keras.callbacks.ModelCheckpoint(str(tmp_path / name), save_weights_only=True, save_freq=2),
        keras.callbacks.TensorBoard(
            str(tmp_path), update_freq=1, histogram_freq=1, profile_batch=3
        ),
        keras.callbacks.Callback(),
    ]
    facts = dict(call_facts(_model(flavour).fit, (tiny_data[0],), {"callbacks": given}))
    assert facts["callbacks"] == "ModelCheckpoint,TensorBoard,Callback"
    assert facts["callback.ModelCheckpoint.save_freq"] == "2"
    assert facts["callback.TensorBoard.update_freq"] == "1"
    assert facts["callback.TensorBoard.histogram_freq"] == "1"
    assert facts["callback.TensorBoard.profile_batch"] == "3"


def test_a_trace_records_how_many_ops_its_graph_holds(tf: Any) -> None:
    def unrolled(x: Any) -> Any:
        for _ in range(50):
            x = x * 2.0 + 1.0
        return x

    def looped(x: Any) -> Any:
        for _ in tf.range(50):
            x = x * 2.0 + 1.0
        return x

    recorder = TraceRecorder()
    with recording(recorder):
        tf.function(unrolled)(tf.ones(3))
        tf.function(looped)(tf.ones(3))
    big, small = recorder.events
    assert big.ops >= 100 > small.ops > 0
    # x * 2.0 fifty times in one scope: mul, mul_1, ... mul_49.
    assert big.repeats >= 50 > small.repeats


def test_functions_run_eagerly_is_read_off_tensorflow(tf: Any) -> None:
    tf.config.run_functions_eagerly(True)
    try:
        facts = call_facts(len, ([1],), {})
    finally:
        tf.config.run_functions_eagerly(False)
    assert facts == (("functions_run_eagerly", "True"),)
    assert call_facts(len, ([1],), {}) == (("functions_run_eagerly", "False"),)


def test_the_inputs_kinds_are_read(tf: Any, tiny_data: Any) -> None:
    x, y = tiny_data

    def batches() -> Any:
        yield x, y

    model = _model("keras3")
    facts = call_facts(
        model.fit, (batches(), y), {"validation_data": tf.data.Dataset.range(3), "epochs": 2}
    )
    assert facts[-3:] == (
        ("x.kind", "generator"),
        ("validation_data.kind", "tf.data.Dataset"),
        ("validation_data.class", "_RangeDataset"),
    )
    assert not [k for k, _ in call_facts(model.fit, (x, y), {}) if k.endswith(".kind")]


def test_a_keras3_py_datasets_workers_are_read() -> None:
    import keras
    import numpy as np

    class Frames(keras.utils.PyDataset):  # type: ignore[misc]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)

        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> Any:
            return np.zeros((2, 4), "float32"), np.zeros((2, 1), "float32")

    facts = dict(call_facts(_model("keras3").fit, (Frames(workers=3),), {}))
    assert {k: v for k, v in facts.items() if k.startswith("x.")} == {
        "x.kind": "PyDataset",
        "x.class": "Frames",
        "x.workers": "3",
        "x.use_multiprocessing": "False",
        "x.max_queue_size": "10",
    }


def test_a_tf_keras_sequence_is_a_py_dataset_without_workers() -> None:
    import numpy as np
    import tf_keras

    class Frames(tf_keras.utils.Sequence):  # type: ignore[misc]
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> Any:
            return np.zeros((2, 4), "float32"), np.zeros((2, 1), "float32")

    facts = dict(call_facts(_model("tf_keras").fit, (Frames(),), {}))
    assert {k: v for k, v in facts.items() if k.startswith("x.")} == {
        "x.kind": "PyDataset",
        "x.class": "Frames",
    }


def test_an_attribute_that_raises_is_left_out(tiny_data: Any) -> None:
    import keras

    class Broken(keras.utils.PyDataset):  # type: ignore[misc]
        @property
        def workers(self) -> int:
            raise RuntimeError("not set up")

        def __len__(self) -> int:
            return 1

    facts = dict(call_facts(_model("keras3").fit, (Broken(),), {}))
    assert facts["x.kind"] == "PyDataset" and "x.workers" not in facts
    assert facts["x.max_queue_size"] == "10"


# -- end to end ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def retraced_report(tf: Any) -> tfdiag.Report:
    """``tfdiag.profile`` of a loop calling a ``tf.function`` with a new Python int each
    time: a new graph per call."""

    @tf.function
    def scaled(x: Any, factor: Any) -> Any:
        return tf.reduce_sum(x * factor)

    x = tf.ones((4, 4))
    counter = itertools.count()

    def loop() -> Any:
        return scaled(x, next(counter))

    return tfdiag.profile(loop, iterations=3, tf_profiler=False, sampling=False)


def test_a_function_retraced_on_a_python_scalar_is_per_iteration_tracing(
    retraced_report: tfdiag.Report,
) -> None:
    first = retraced_report.findings[0]
    assert first.id == "per-iteration-tracing"
    # The user's line that calls the retraced function comes first, then the tracer.
    assert first.evidence[0].startswith("line test_capture_tf.py:")
    assert "`return scaled(x, next(counter))` runs a tf.function" in first.evidence[0]
    assert first.evidence[1].startswith(
        "`tracing_compilation.py:_create_concrete_function` runs 1× per iteration "
        "(3 traces in 3 steady-state calls)"
    )
    cold = [e for e in retraced_report.traces if e.call == 0]
    assert [e.params[1] for e in cold] == [("factor", "Literal[0]")]


def test_a_function_retraced_on_a_python_scalar_is_reported_with_the_argument(
    retraced_report: tfdiag.Report,
) -> None:
    params = [(e.call, e.params[1]) for e in retraced_report.traces]
    assert params == [(i, ("factor", f"Literal[{i}]")) for i in range(4)]
    tracing = retraced_report.findings[0]
    assert any(
        "argument `factor` is a Python value that changes: 1, 2, 3" in e for e in tracing.evidence
    ), tracing.evidence
    assert tracing.fix.startswith("Pass the `factor` argument as a tensor at test_capture_tf.py:")
    assert (
        "(`return scaled(x, next(counter))`): wrap the value in `tf.constant(...)`" in tracing.fix
    )
