"""Inference variants: each runs the same model on the same inputs another way; its output is
checked against the call as written. They read the user's model and never change it (a
variant that needs other compile settings works on a clone)."""

from __future__ import annotations

from typing import Any

from tfdiag.measure.subject import num_samples, to_numpy
from tfdiag.measure.verify.call import Call
from tfdiag.measure.verify.variant import EVERY_BACKEND, INFERENCE, JAX_ONLY, Built, Variant

#: One ``predict`` over this many batches stands for the user's many calls.
BATCHES_IN_ONE_PREDICT = 8
#: The batch size a larger-batch ``predict`` uses (at most all of x).
LARGE_BATCH = 1024
#: predict_on_batch runs all of x as one batch: at most this many samples.
MAX_ONE_BATCH = 1 << 16


#: What a variant that runs x as it is reproduces of a predict (or model) call: the batch
#: size and verbosity change how, not what, is computed.
_SAME_X = frozenset({"x", "batch_size", "verbose"})


def rerunnable(call: Call) -> str | None:
    """Why the call as written cannot be run again for verification, or None."""
    if call.arg("callbacks"):
        return "the call passes callbacks, which a re-run would call again"
    return None


def baseline_inference(call: Call) -> Built:
    """The call as written, on the user's own model (inference reads it only)."""

    def run() -> Any:
        return call.fn(*call.args, **call.kwargs)

    return Built(run=run, result=run, fix=call.code())


def _predict_of_arrays(call: Call) -> str | None:
    if call.method != "predict":
        return f"the call is {call.method or 'not a Keras method'}, not predict"
    if call.named is None or call.x_kind != "array":
        return "x is not a single array or tensor"
    if call.arg("steps") is not None:
        return "the call passes steps=: a variant over other batches would run another number"
    return None


def _predict_on_batch_applies(call: Call) -> str | None:
    why = _predict_of_arrays(call)
    if why is None and num_samples(call.x) > MAX_ONE_BATCH:
        why = f"x has more than {MAX_ONE_BATCH:,} samples for one batch"
    return why


def _predict_on_batch(call: Call) -> Built:
    model, x = call.model, call.x

    def run() -> Any:
        return model.predict_on_batch(x)

    return Built(run=run, result=run, fix="model.predict_on_batch(x)")


def _graph_applies(call: Call) -> str | None:
    if call.method not in ("predict", "predict_on_batch", "__call__"):
        return f"the call is {call.method or 'not a Keras method'}, not inference"
    if call.named is None or call.x_kind != "array":
        return "x is not a single array or tensor"
    if call.arg("training"):
        return "the call runs the model with training=True; the graph function runs inference"
    return None


def _graph_function(call: Call) -> Built:
    model, x, tf = call.model, call.x, call.tf
    fn = tf.function(lambda t: model(t, training=False))  # built once, reused by every run

    def run() -> Any:
        return to_numpy(fn(x))

    return Built(
        run=run,
        result=run,
        fix="predict_fn = tf.function(lambda x: model(x, training=False))  # once\n"
        "predict_fn(x).numpy()",
    )


def _jit_applies(call: Call) -> str | None:
    why = _graph_applies(call)
    if why is None and call.flavour != "keras3":
        why = f"the model is {call.flavour}, not Keras 3"
    return why


def _jit_forward(call: Call) -> Built:
    from tfdiag.measure.methods_jax import jit_forward

    forward, x = jit_forward(call.model), call.x  # jitted once, reused by every run

    def run() -> Any:
        return forward(x)

    return Built(
        run=run,
        result=run,
        fix="@jax.jit  # once\n"
        "def forward(tv, ntv, x):\n"
        "    return model.stateless_call(tv, ntv, x, training=False)[0]\n"
        "forward([v.value for v in model.trainable_variables],\n"
        "        [v.value for v in model.non_trainable_variables], x)",
    )


def _one_predict(call: Call) -> Built:
    import numpy as np

    k = BATCHES_IN_ONE_PREDICT
    model, rest = call.model, call.rest()
    many = np.concatenate([np.asarray(call.x)] * k)

    def run() -> Any:
        return model.predict(many, **rest)

    return Built(
        run=run,
        result=run,
        units=k,
        expected=lambda ref: np.concatenate([np.asarray(ref)] * k),
        fix=call.code().replace("(x", "(np.concatenate(batches)", 1)
        + f"  # one call over {k} batches of x",
        note=f"one predict over {k} copies of x, its time divided by {k}",
    )


def _larger_batch_applies(call: Call) -> str | None:
    why = _predict_of_arrays(call)
    if why is None and num_samples(call.x) <= call.batch_size:
        why = f"x has no more samples than batch_size={call.batch_size}"
    return why


def _larger_batch(call: Call) -> Built:
    model, x = call.model, call.x
    batch = min(LARGE_BATCH, num_samples(x))
    rest = call.rest("batch_size")

    def run() -> Any:
        return model.predict(x, batch_size=batch, **rest)

    return Built(run=run, result=run, fix=call.code(batch_size=batch))


def _compiled_predict_applies(call: Call) -> str | None:
    if call.facts.get("run_eagerly") != "True":
        return "the model is not compiled with run_eagerly=True"
    if call.method not in ("predict", "evaluate") or call.named is None:
        return f"the call is {call.method or 'not a Keras method'}, not predict"
    return None


def _compiled_predict(call: Call) -> Built:
    clone = call.clone(run_eagerly=False)
    method = getattr(clone, call.method)

    def run() -> Any:
        return method(*call.args, **call.kwargs)

    return Built(
        run=run,
        result=run,
        fix="model.compile(..., run_eagerly=False)  # on a clone\n" + call.code(),
    )


def _cast_applies(call: Call) -> str | None:
    if call.method not in ("predict", "predict_on_batch", "__call__"):
        return f"the call is {call.method or 'not a Keras method'}, not inference"
    if call.named is None or call.x_kind != "array":
        return "x is not a single array or tensor"
    if call.x_dtype != "float64":
        return f"x is {call.x_dtype}, not float64"
    return None


def _cast_x(call: Call) -> Any:
    import numpy as np

    x = call.x
    if isinstance(x, np.ndarray) or "tensorflow" not in type(x).__module__:
        return x.astype("float32")  # NumPy, a JAX array
    return call.tf.cast(x, "float32")


def _cast_once(call: Call) -> Built:
    named = dict(call.named or {})
    named["x"] = _cast_x(call)  # once, outside the timed runs
    fn = call.fn

    def run() -> Any:
        return fn(**named)

    return Built(
        run=run,
        result=run,
        fix="x = x.astype('float32')  # once, before the calls\n" + call.code(),
    )


INFERENCE_VARIANTS = {
    "predict_on_batch": Variant(
        "predict_on_batch",
        INFERENCE,
        _predict_on_batch_applies,
        _predict_on_batch,
        backends=EVERY_BACKEND,
        reproduces=_SAME_X,
    ),
    "tf.function": Variant(
        "tf.function",
        INFERENCE,
        _graph_applies,
        _graph_function,
        reproduces=_SAME_X | {"training"},
        twin="jit stateless_call",
    ),
    "jit stateless_call": Variant(
        "jit stateless_call",
        INFERENCE,
        _jit_applies,
        _jit_forward,
        reproduces=_SAME_X | {"training"},
        backends=JAX_ONLY,
        twin="tf.function",
    ),
    "one predict": Variant(
        "one predict over all batches",
        INFERENCE,
        _predict_of_arrays,
        _one_predict,
        backends=EVERY_BACKEND,
    ),
    "larger batch": Variant(
        "larger batch_size", INFERENCE, _larger_batch_applies, _larger_batch, backends=EVERY_BACKEND
    ),
    "compiled predict": Variant(
        "compiled as a graph",
        INFERENCE,
        _compiled_predict_applies,
        _compiled_predict,
        backends=EVERY_BACKEND,
    ),
    "cast once": Variant(
        "inputs cast once", INFERENCE, _cast_applies, _cast_once, backends=EVERY_BACKEND
    ),
}
