"""Build-type lines: a constructor or a setup call run on every iteration."""

from __future__ import annotations

from tfdiag.advise.remedies.base import (
    Remedy,
    Scene,
    assigned,
    outside,
    per_call,
    quoted,
    receiver,
)
from tfdiag.analysis.lines import UserLine


def construct(line: UserLine, scene: Scene) -> Remedy | None:
    if not per_call(line):
        return None
    api, name, out, moved = line.api, assigned(line.code), outside(line), quoted(line)
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
    if not per_call(line):
        return None
    method, out, moved = line.api.rsplit(".", 1)[-1], outside(line), quoted(line)
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
