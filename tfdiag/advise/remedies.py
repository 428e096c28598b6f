"""Remedies keyed by the API at the user's line: one rule per nature of work
(:data:`~tfdiag.records.catalog.apis.NATURES`), each writing the change to that line.

A rule reads the anchored line (its code, the API it calls, how often it ran) and the
record, and returns one remedy: the change, with its code, and at most one alternative.
Every sentence is chosen by what the record shows: a rule that cannot say something true
of this line returns None, and the finding keeps its own text. The API's public name
comes from the catalog; the user's own names (the variable a line assigns, the object a
method is called on, the dataset a loop iterates) from the line's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tfdiag.analysis.lines import UserLine
from tfdiag.records.units import fmt_pct0

#: At least this many calls per iteration make a build-type call "on every call".
PER_CALL = 0.5


@dataclass(frozen=True)
class Remedy:
    """A fix for one line: ``key`` names the rule and case (``construct:tf.function``) for
    tests and for ``tfdiag fix``; ``text`` is what the finding shows."""

    key: str
    text: str


def where(line: UserLine) -> str:
    """``app.py:34 `lookup = …``` — the line, and its text when captured."""
    return f"{line.location} `{line.code}`" if line.code else line.location


def per_iteration(line: UserLine) -> str:
    n = line.calls_per_iteration
    if n is None:
        return ""
    figure = f"{n:.0f}" if n >= 10 or abs(n - round(n)) < 0.05 else f"{n:.2g}"
    return f"{'' if line.exact else '≈'}{figure}× per iteration"


_VERBS = {
    "construct": "builds a new",
    "setup": "runs",
    "keras-loop": "calls",
    "keras-step": "calls",
    "model-call": "calls a model or layer eagerly",
    "graph-call": "calls",
    "eager-op": "dispatches",
    "train-op": "runs",
    "weights-host": "copies every weight with",
    "to-host": "waits for a value with",
    "convert": "converts data with",
    "data-iterate": "starts a new pass over a dataset with",
    "data-read": "reads",
    "metric": "updates",
    "summary": "writes",
    "save": "writes",
    "clear": "clears the session with",
    "numpy": "runs",
}


def evidence(line: UserLine, scope: str = "of steady state") -> str:
    """The finding's first evidence line: the user's line, the API and its figures
    (``scope``: what its share is a share of)."""
    verb = _VERBS.get(line.nature, "calls") if line.api else "runs your own Python"
    api = f"`{line.api}`" if line.api and line.nature != "model-call" else ""
    figures = ", ".join(x for x in (per_iteration(line), f"{fmt_pct0(line.share)} {scope}") if x)
    head = f"line {where(line)}"
    if line.nature == "debug-switch":
        return f"{head} turns on `{_SPELLED.get(line.api, line.api)}`"
    if line.entry:
        return f"line {where(line)} makes the call profiled (`{line.api}`)"
    return f"{head} {verb}{' ' + api if api else ''}: {figures}"


# -- what the line's text names --------------------------------------------------------------

_ASSIGNED = re.compile(r"^\s*(?:self\.)?([A-Za-z_]\w*)\s*=[^=]")


def assigned(code: str) -> str | None:
    """``lookup = keras.layers.StringLookup(...)`` → ``lookup``."""
    m = _ASSIGNED.match(code)
    return m.group(1) if m else None


def receiver(code: str, method: str) -> str | None:
    """``y = self.model.predict(x)`` with ``predict`` → ``self.model``."""
    m = re.search(rf"([A-Za-z_][\w.]*(?:\[[^\]]*\])?)\.{re.escape(method)}\s*\(", code)
    return m.group(1) if m else None


def first_argument(code: str, method: str) -> str | None:
    """``model.predict(batch, verbose=0)`` → ``batch``."""
    m = re.search(rf"\.{re.escape(method)}\s*\(\s*([^,()=]+?)\s*[,)]", code)
    return m.group(1) if m else None


_FOR = re.compile(r"^\s*for\s+(.+?)\s+in\s+(.+?)\s*:")
_COUNT = re.compile(r"sum\(\s*1\s+for\s+\w+\s+in\s+([\w.]+)|len\(\s*list\(\s*([\w.]+)\s*\)")


def counted_dataset(code: str) -> str | None:
    """The dataset a line counts by reading it (``sum(1 for _ in ds)``,
    ``len(list(ds))``, ``for _ in ds:``), or None."""
    m = _COUNT.search(code)
    if m:
        return m.group(1) or m.group(2)
    m = _FOR.match(code)
    if m and m.group(1).strip() in ("_", "_batch", "_b", "_x"):
        return m.group(2).strip()
    return None


# -- the rules, one per nature ------------------------------------------------------------------


@dataclass(frozen=True)
class Scene:
    """What a rule may read beside its line: every line of the run and its backend."""

    lines: tuple[UserLine, ...] = ()
    backend: str | None = None

    def siblings(self, line: UserLine) -> list[UserLine]:
        """The other lines of the same user function."""
        return [
            u
            for u in self.lines
            if u.file == line.file
            and u.function_line == line.function_line
            and u is not line
            and not u.entry
        ]


Rule = Callable[[UserLine, Scene], "Remedy | None"]


def _per_call(line: UserLine) -> bool:
    return line.calls_per_iteration is None or line.calls_per_iteration >= PER_CALL


def _outside(line: UserLine) -> str:
    return (
        f"outside `{line.function}`"
        if line.function and line.function != "<module>"
        else ("before the loop")
    )


def _moved(line: UserLine) -> str:
    """```lookup = …``` (app.py:34): the line, as the fix names it."""
    return f"`{line.code}` ({line.location})" if line.code else f"line {line.location}"


def construct(line: UserLine, scene: Scene) -> Remedy | None:
    if not _per_call(line):
        return None
    api, name, out, moved = line.api, assigned(line.code), _outside(line), _moved(line)
    if api == "tf.function":
        return Remedy(
            "construct:tf.function",
            f"Create the `tf.function` of {moved} once, {out}, and call that object on every "
            "call: a new one is traced again each time.",
        )
    if ".optimizers." in api:
        return Remedy(
            "construct:optimizer",
            f"Create the optimizer of {moved} once, {out}, and change its learning rate in "
            "place (`optimizer.learning_rate = new_lr`): a new one starts its state from zero, "
            "and the `tf.function` step is traced again for it.",
        )
    if api.startswith("tf.data."):
        return Remedy(
            "construct:dataset",
            f"Build the dataset of {moved} once, {out}, and iterate over that one here "
            "(`ds.repeat()` for more than one pass).",
        )
    if api in ("tf.Variable", "keras.Variable"):
        return Remedy(
            "construct:variable",
            f"Create the variable of {moved} once, {out}, and `assign` the new value to it here.",
        )
    if api.endswith(("clone_model", ".Sequential", ".Model", ".Functional")):
        return Remedy(
            "construct:model",
            f"Build the model of {moved} once, {out}, and copy new weights into it "
            "(`model.set_weights(...)`) when they change: a new model throws away every graph "
            "Keras traced for the last one.",
        )
    reuse = f"reuse `{name}`" if name else "reuse that object"
    return Remedy(
        "construct",
        f"Move {moved} {out}: build the `{api}` once (at module level, or where the model is "
        f"built) and {reuse} on every call.",
    )


def setup(line: UserLine, scene: Scene) -> Remedy | None:
    if not _per_call(line):
        return None
    method, out, moved = line.api.rsplit(".", 1)[-1], _outside(line), _moved(line)
    if method == "adapt":
        layer = receiver(line.code, "adapt") or "the layer"
        return Remedy(
            "setup:adapt",
            f"Adapt `{layer}` once, {out}, and reuse it: {moved} adapts it on every call, "
            "reading all of its data again. Adapt again only when that data changes.",
        )
    if method == "compile":
        model = receiver(line.code, "compile") or "model"
        return Remedy(
            "setup:compile",
            f"Compile `{model}` once, {out}: {moved} compiles it on every call, which throws "
            "away the step Keras traced. Change a hyper-parameter on the compiled model "
            f"instead (`{model}.optimizer.learning_rate.assign(new_lr)`).",
        )
    if method == "load_weights":
        return Remedy(
            "setup:load-weights",
            f"Load the weights of {moved} once, at start-up: it reads and assigns every weight "
            "on every call. To follow a checkpoint, reload only when its file changed "
            "(compare `os.path.getmtime(path)`).",
        )
    if method == "load_model":
        return Remedy(
            "setup:load-model",
            f"Load the model of {moved} once, {out}, and reuse it on every call.",
        )
    return Remedy(
        "setup",
        f"Run {moved} once, {out}, and reuse its result on every call.",
    )


def keras_loop(line: UserLine, scene: Scene) -> Remedy | None:
    method = line.api.rsplit(".", 1)[-1]
    model = receiver(line.code, method) or "model"
    arg = first_argument(line.code, method) or "x"
    at = line.location
    if scene.backend == "jax" and method in ("predict", "fit", "evaluate"):
        step = {"predict": "predict_on_batch", "fit": "train_on_batch", "evaluate": "test_on_batch"}
        args = arg if method == "predict" else "x, y"
        return Remedy(
            f"keras-loop:{method}",
            f"Call `{model}.{step[method]}({args})` at {at} instead of `{method}`, which sets "
            "up a data adapter, an epoch iterator and callbacks on every call around one "
            "jitted step.",
        )
    if method == "predict":
        return Remedy(
            "keras-loop:predict",
            f"Call `{model}.predict_on_batch({arg})` at {at} instead of `predict`, which builds "
            f"a data pipeline, callbacks and output buffers on every call; or "
            f"`{model}({arg}, training=False)`.",
        )
    if method == "fit":
        return Remedy(
            "keras-loop:fit",
            f"Call `{model}.train_on_batch(x, y)` at {at} instead of `fit`, which builds a data "
            "pipeline and callbacks on every call.",
        )
    if method == "evaluate":
        return Remedy(
            "keras-loop:evaluate",
            f"Call `{model}.test_on_batch(x, y)` at {at} instead of `evaluate`, which builds a "
            "data pipeline and callbacks on every call.",
        )
    return None


def data_iterate(line: UserLine, scene: Scene) -> Remedy | None:
    counted = counted_dataset(line.code)
    if counted is not None:
        return Remedy(
            "data-iterate:count",
            f"Use `{counted}.cardinality()` for its length: {_moved(line)} reads the whole "
            f"dataset only to count it (or count once, {_outside(line)}).",
        )
    return Remedy(
        "data-iterate",
        f"Make the iterator once, `it = iter(ds)` {_outside(line)}, and call `next(it)` at "
        f"{line.location}: a new iterator every iteration starts the pipeline from scratch.",
    )


def data_read(line: UserLine, scene: Scene) -> Remedy | None:
    """Reading a dataset is the pipeline's business, except reading it only to count it."""
    return data_iterate(line, scene) if counted_dataset(line.code) is not None else None


def weights_host(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "weights-host",
        f"Update the variables in place, inside a `tf.function`, instead of {_moved(line)}, "
        "which copies every weight through NumPy on every call: "
        "`for t, s in zip(target.weights, source.weights): t.assign(tau * s + (1 - tau) * t)`.",
    )


def to_host(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "to-host",
        f"Keep the value of {_moved(line)} a tensor and read it every N iterations: reading "
        "it waits for the computation on every one.",
    )


def convert(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "convert",
        f"Convert the data of {_moved(line)} into a tensor once, {_outside(line)} "
        "(`x = tf.constant(x, tf.float32)`), and pass the tensor here.",
    )


def summary(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "summary",
        f"Write the summary of {_moved(line)} every N steps (`if step % 100 == 0:`), not on "
        "every step.",
    )


def save(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "save",
        f"Save less often than {_moved(line)} does: every N iterations, or once per epoch.",
    )


def clear(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "clear",
        f"Clear the session once, {_outside(line)}, or not at all: {_moved(line)} clears it on "
        "every iteration, so every model and graph is built again after it.",
    )


def _function(line: UserLine) -> str:
    """```train_step`` (train.py:40)`: the user's function holding a line."""
    base = line.file.replace("\\", "/").rsplit("/", 1)[-1]
    return f"`{line.function}` ({base}:{line.function_line})"


def _trains(line: UserLine, scene: Scene) -> bool:
    """Does the line's function compute gradients or apply them (a training step)?"""
    return line.nature == "train-op" or any(u.nature == "train-op" for u in scene.siblings(line))


def _per_item(line: UserLine) -> bool:
    """Is the line's function run many times per iteration (once per item of a loop)?"""
    return line.function_calls is not None and line.function_calls >= 8


def eager(line: UserLine, scene: Scene) -> Remedy | None:
    """Ops, a model, a gradient run from Python one at a time, every iteration."""
    if not line.function or line.function == "<module>":
        return None
    jax = scene.backend == "jax"
    if _trains(line, scene):
        if jax:
            return Remedy(
                "eager:jit-step",
                f"Compile the training step {_function(line)} with `jax.jit` (a function of "
                "the trainable and non-trainable variables, `model.stateless_call`, returning "
                f"the new values): {_moved(line)} and the rest of its work run op by op from "
                "Python every step.",
            )
        return Remedy(
            "eager:tf-function-step",
            f"Decorate the training step {_function(line)} with `@tf.function`: {_moved(line)} "
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
            f"{name}(x, training=False))` {_outside(line)}, then `{fn}({arg})` at {line.location}: "
            "called directly, every layer's Python and op runs one by one on every call.",
        )
    if line.nature == "metric":
        return Remedy(
            "eager:metric",
            f"Update the metric of {_moved(line)} inside the `tf.function` step, or every N "
            "steps: from Python, each update runs its ops one at a time.",
        )
    step = next((u for u in scene.lines if u.nature == "graph-call" and not u.entry), None)
    if _per_item(line) and step is not None and not jax:
        return Remedy(
            "eager:into-step",
            f"Move the per-item work of {_function(line)} into the `tf.function` step its "
            f"result feeds (`{step.code}`, {step.location}), on the whole batch: batched ops, "
            f"or `tf.vectorized_map` over it. From Python, {_moved(line)} dispatches one op "
            "at a time for every item.",
        )
    if _per_item(line) and not jax:
        return Remedy(
            "eager:numpy-per-item",
            f"Do the per-item work of {_function(line)} in NumPy (or convert once with "
            f"`.numpy()` and stay there): {_moved(line)} dispatches a TensorFlow op for each "
            "of its small items, and each dispatch costs more than the work it does.",
        )
    if jax:
        return Remedy(
            "eager:jit",
            f"Compile {_function(line)} with `jax.jit`: {_moved(line)} dispatches its ops one "
            "at a time from Python on every call.",
        )
    return Remedy(
        "eager:tf-function",
        f"Decorate {_function(line)} with `@tf.function`: {_moved(line)} dispatches its ops "
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
_SPELLED = {
    "run-eagerly": "run_eagerly=True",
    "dynamic": "dynamic=True",
    "tf-functions-eagerly": "tf.config.run_functions_eagerly(True)",
    "tf-data-debug": "tf.data.experimental.enable_debug_mode()",
    "tf-check-numerics": "tf.debugging.enable_check_numerics()",
    "jax-disable-jit": "jax_disable_jit",
    "jax-debug-nans": "jax_debug_nans",
    "eager-step": "run_eagerly=True",
}


def debug_switch(line: UserLine, scene: Scene) -> Remedy | None:
    """A debugging setting the record shows on: remove it, at its line when found."""
    why = _SWITCH_WHY.get(line.api)
    if why is None:
        return None
    if line.api == "run-eagerly" and scene.backend == "jax":
        why = (
            "it runs every step op by op in Python instead of one jitted XLA program; without "
            "it `fit`/`predict`/`evaluate` run the jitted step"
        )
    spelled = _SPELLED[line.api]
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


#: One rule per nature (a nature without one keeps the finding's own text).
RULES: dict[str, Rule] = {
    "debug-switch": debug_switch,
    "model-call": eager,
    "eager-op": eager,
    "train-op": eager,
    "metric": eager,
    "construct": construct,
    "setup": setup,
    "keras-loop": keras_loop,
    "data-iterate": data_iterate,
    "data-read": data_read,
    "weights-host": weights_host,
    "to-host": to_host,
    "convert": convert,
    "summary": summary,
    "save": save,
    "clear": clear,
}


def remedy(line: UserLine | None, scene: Scene | None = None) -> Remedy | None:
    """The remedy for the API at ``line`` (None: no rule, or none true of this line)."""
    if line is None or line.entry:
        return None
    rule = RULES.get(line.nature)
    return rule(line, scene or Scene()) if rule is not None else None
