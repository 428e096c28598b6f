"""Ops run from Python one at a time, and the debugging switches that make a step do so."""

from __future__ import annotations

import re

from tfdiag.advise.remedies.base import (
    SPELLED,
    Remedy,
    Scene,
    outside,
    quoted,
)
from tfdiag.analysis.lines import UserLine
from tfdiag.records.catalog.backends import JAX


def _function(line: UserLine) -> str:
    """```train_step`` (train.py:40)`: the user's function holding a line."""
    base = line.file.replace("\\", "/").rsplit("/", 1)[-1]
    return f"`{line.function}` ({base}:{line.function_line})"


def _trains(line: UserLine, scene: Scene) -> bool:
    """Does the line's function compute gradients or apply them (a training step)?"""
    return line.nature == "train-op" or any(u.nature == "train-op" for u in scene.siblings(line))


def _per_item(line: UserLine) -> bool:
    """Is the line run many times per iteration (its function once per item of a loop, or
    the line itself in a loop over items)?"""
    return any(n is not None and n >= 8 for n in (line.function_calls, line.calls_per_iteration))


#: The APIs of reading one element of a tensor (or a JAX array) from Python (an index, a
#: comparison, a scalar conversion): each read an op and a copy, where NumPy reads memory.
_ELEMENT_APIS = frozenset({"tensor[...]", "array[...]"})
_INDEXED = re.compile(r"\b([A-Za-z_]\w*)\s*\[\s*[A-Za-z_]\w*\s*\]")


def _element_read(line: UserLine) -> str | None:
    """The tensor a line reads element by element (``probs`` of ``if probs[i] > t:``):
    the line's API is tensor indexing and its text indexes a name by a loop variable."""
    if line.api not in _ELEMENT_APIS:
        return None
    m = _INDEXED.search(line.code)
    return m.group(1) if m else None


def eager(line: UserLine, scene: Scene) -> Remedy | None:
    """Ops, a model, a gradient run from Python one at a time, every iteration."""
    if not line.function or line.function == "<module>":
        return None
    jax = scene.backend == JAX.name
    if _trains(line, scene) or re.search(r"\btraining\s*=\s*True\b", line.code):
        if jax:
            return Remedy(
                "eager:jit-step",
                f"Compile the training step {_function(line)} with `jax.jit` (a function of "
                "the trainable and non-trainable variables, `model.stateless_call`, returning "
                f"the new values): {quoted(line)} and the rest of its work run op by op from "
                "Python every step.",
            )
        return Remedy(
            "eager:tf-function-step",
            f"Decorate the training step {_function(line)} with `@tf.function`: {quoted(line)} "
            "and the rest of its work run op by op from Python every step; as one graph they "
            "run in one call. Keep printing and `.numpy()` outside it.",
        )
    if line.nature == "model-call":
        model = re.match(
            r"^(?:[\w, ]+=\s*)?([A-Za-z_][\w.]*)\s*\(\s*([^,()=]+?)?\s*[,)]", line.code
        )
        name = model.group(1) if model else "model"
        arg = model.group(2) if model and model.group(2) else "x"
        if jax:
            return Remedy(
                "eager:predict-on-batch",
                f"Call `{name}.predict_on_batch({arg})` at {line.location} instead of calling the "
                "model: it runs Keras' compiled predict step, where a call runs every layer's "
                "Python and op one by one.",
            )
        fn = name.replace(".", "_").replace("self_", "") + "_fn"
        return Remedy(
            "eager:tf-function-model",
            f"Call the model through a `tf.function` built once: `{fn} = tf.function(lambda x: "
            f"{name}(x, training=False))` {outside(line)}, then `{fn}({arg})` at {line.location}: "
            "called directly, every layer's Python and op runs one by one on every call.",
        )
    if line.nature == "metric":
        return Remedy(
            "eager:metric",
            f"Update the metric of {quoted(line)} inside the `tf.function` step, or every N "
            "steps: from Python, each update runs its ops one at a time.",
        )
    element = _element_read(line)
    if element is not None and jax:
        return Remedy(
            "eager:element-numpy",
            f"Do the loop's work on the whole array at once (one op over its first axis, "
            f"not a Python loop over `{element}[i]`), or convert `{element}` to NumPy once, "
            f"before the loop (`{element} = np.asarray({element})`), and read its rows there: "
            f"{quoted(line)} runs JAX ops, and a copy back to Python, for every row it reads.",
        )
    if element is not None:
        return Remedy(
            "eager:element-numpy",
            f"Convert `{element}` to NumPy once, before the loop (`{element} = "
            f"{element}.numpy()`), and read its elements there: {quoted(line)} runs a "
            "TensorFlow op, and a copy back to Python, for every element it reads; or do the "
            f"whole loop's test at once (`np.nonzero({element} > …)`).",
        )
    step = next((u for u in scene.lines if u.nature == "graph-call" and not u.entry), None)
    if _per_item(line) and step is not None and not jax:
        return Remedy(
            "eager:into-step",
            f"Move the per-item work of {_function(line)} into the `tf.function` step its "
            f"result feeds (`{step.code}`, {step.location}), on the whole batch: batched ops, "
            f"or `tf.vectorized_map` over it. From Python, {quoted(line)} dispatches one op "
            "at a time for every item.",
        )
    if _per_item(line) and not jax:
        return Remedy(
            "eager:numpy-per-item",
            f"Do the per-item work of {_function(line)} in NumPy (or convert once with "
            f"`.numpy()` and stay there): {quoted(line)} dispatches a TensorFlow op for each "
            "of its small items, and each dispatch costs more than the work it does.",
        )
    if _per_item(line) and jax:
        return Remedy(
            "eager:batch-or-numpy",
            f"Do the per-item work of {_function(line)} on whole arrays at once (one op "
            "over the batch axis instead of a Python loop over items), or in NumPy: "
            f"{quoted(line)} dispatches JAX ops one at a time for each of its small items, "
            "and each dispatch costs more than the work it does.",
        )
    if jax:
        return Remedy(
            "eager:jit",
            f"Compile {_function(line)} with `jax.jit`: {quoted(line)} dispatches its ops one "
            "at a time from Python on every call.",
        )
    return Remedy(
        "eager:tf-function",
        f"Decorate {_function(line)} with `@tf.function`: {quoted(line)} dispatches its ops "
        "one at a time from Python on every call; in a graph they run in one call.",
    )


#: What each debugging switch does, and so what removing it gives back.
_SWITCH_WHY = {
    "run-eagerly": "it runs the Keras step as Python, op by op, on every batch; without it "
    "`fit`/`predict`/`evaluate` run the step as a graph",
    "dynamic": "a layer built with `dynamic=True` makes its whole model run eagerly, op by "
    "op; write its `call` with TensorFlow control flow (`tf.cond`, `tf.while_loop`, or "
    "AutoGraph's `if`/`for` on tensors) so it traces",
    "tf-functions-eagerly": "while it is on, every `tf.function` runs as plain Python",
    "tf-data-debug": "tf.data's debug mode runs every `map` function eagerly, one element at "
    "a time, with no parallelism",
    "tf-check-numerics": "it checks the output of every op for NaN and Inf",
    "jax-disable-jit": "with JIT disabled every jitted function runs op by op",
    "jax-debug-nans": "it checks every op's output for NaN and runs each op on its own",
    "eager-step": "Keras ran the model's step as Python, op by op, on every batch: that is what "
    "`run_eagerly=True` in `compile()` does, and in tf_keras a layer built with "
    "`dynamic=True`; without them the step runs as a graph",
}


def debug_switch(line: UserLine, scene: Scene) -> Remedy | None:
    """A debugging setting the record shows on: remove it, at its line when found."""
    why = _SWITCH_WHY.get(line.api)
    if why is None:
        return None
    if line.api == "run-eagerly" and scene.backend == JAX.name:
        why = (
            "it runs every step op by op in Python instead of one jitted XLA program; without "
            "it `fit`/`predict`/`evaluate` run the jitted step"
        )
    spelled = SPELLED[line.api]
    if line.line and line.code:
        if line.api in ("run-eagerly", "dynamic"):
            change = f"Remove `{spelled}` from `{line.code}` ({line.location})"
        else:
            change = f"Remove `{line.code}` ({line.location})"
    elif line.api == "eager-step":
        change = "Find what makes the step run eagerly and turn it off"
    else:
        change = f"Turn off `{spelled}` where your code sets it"
    return Remedy(f"debug-switch:{line.api}", f"{change}: {why}.")
