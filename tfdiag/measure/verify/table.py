"""The fixes table: for each finding id, the mechanical fixes verification measures — data, as
the findings table is (:data:`tfdiag.advise.table.FINDINGS`) — and, for the findings without
one, why not (said in the finding's verification)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from tfdiag.measure.subject import to_numpy
from tfdiag.measure.verify.call import Call
from tfdiag.measure.verify.data import DATA_VARIANTS as D
from tfdiag.measure.verify.inference import INFERENCE_VARIANTS as I
from tfdiag.measure.verify.training import TRAINING_VARIANTS as T
from tfdiag.measure.verify.variant import INFERENCE, Built, Variant


def _retrace_applies(call: Call) -> str | None:
    if call.model is not None:
        return (
            "the traces are Keras' own (the functions of the input pipeline it builds per "
            "call, or its step for a new input shape): per-call-input-pipeline's fix, or "
            "fixed input shapes, remove them"
        )
    if not callable(getattr(call.fn, "python_function", None)):
        return (
            "the retraced tf.function is called inside your code: tfdiag holds only the "
            "function you profiled (pass tensors, or give the tf.function reduce_retracing=True)"
        )
    return None


def _retracing(tensors: bool) -> Any:
    def prepare(call: Call) -> Built:
        tf = call.tf
        fn = tf.function(call.fn.python_function, reduce_retracing=True)  # type: ignore[attr-defined]

        def tensor(value: Any) -> Any:
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            return tf.constant(value) if number and tensors else value

        args = tuple(tensor(a) for a in call.args)
        kwargs = {k: tensor(v) for k, v in call.kwargs.items()}

        def run() -> Any:
            return to_numpy(fn(*args, **kwargs))

        fix = "fn = tf.function(f, reduce_retracing=True)  # once\n"
        fix += "fn(tf.constant(n), ...)  # Python numbers as tensors" if tensors else "fn(...)"
        return Built(run=run, result=run, fix=fix)

    return prepare


#: An int passed as ``tf.constant`` is an int32 tensor where the Python number was converted
#: to whatever the op needed: that variant can fail (its reason says so) where the other runs.
RETRACING = (
    Variant("reduce_retracing", INFERENCE, _retrace_applies, _retracing(tensors=False)),
    Variant("Python numbers as tensors", INFERENCE, _retrace_applies, _retracing(tensors=True)),
)

#: Finding id → the fixes tried, in order (those that apply to the call are measured).
FIXES: MappingProxyType[str, tuple[Variant, ...]] = MappingProxyType(
    {
        "per-call-input-pipeline": (
            I["predict_on_batch"],
            I["tf.function"],
            I["jit stateless_call"],
            I["one predict"],
            T["more epochs"],
            T["train step"],
            T["jit train step"],
        ),
        "eager-execution": (
            T["compiled fit"],
            I["compiled predict"],
            I["tf.function"],
            I["jit stateless_call"],
        ),
        "input-bound": (D["parallel"], D["cache"], D["bound"]),
        "per-step-overhead": (T["steps_per_execution"], I["larger batch"]),
        "conversion-overhead": (I["cast once"], T["cast once"]),
        "per-iteration-tracing": RETRACING,
    }
)

#: Finding id → why it has no mechanical fix (said in its verification, status ``skipped``).
NO_FIX: MappingProxyType[str, str] = MappingProxyType(
    {
        "per-epoch-overhead": "the data must be repeated and the epochs divided in your code",
        "model-rebuilt-per-call": "the rebuild is in your code: only you can move it out of "
        "the loop",
        "python-in-graph": "the Python function must be rewritten with TensorFlow ops",
        "callback-overhead": "the callbacks are your choice: tfdiag does not drop them",
        "compute-bound": "a conclusion about the model's own ops, not a call to change",
        "build-dominated": "one-time cost: the steady state has nothing to change",
        "warmup": "about the run's timeline, not a call to change",
        "spikes": "about the run's timeline, not a call to change",
        "drift": "about the run's timeline, not a call to change",
        "costly-line": "the line is in your code: `tfdiag fix` proposes a measured edit of it",
        "no-known-cause": "no cause is named, so there is no change to measure",
        "xla-compile-per-shape": "the shapes come from your data: pad or bucket them in your code",
    }
)
