"""Lines that do one kind of work too often: a Keras loop per batch, a dataset iterated or
read again, weights or tensors through the host, a summary, a save, a session cleared."""

from __future__ import annotations

from tfdiag.advise.remedies.base import (
    Remedy,
    Scene,
    counted_dataset,
    first_argument,
    outside,
    quoted,
    receiver,
)
from tfdiag.analysis.lines import UserLine
from tfdiag.records.catalog.backends import JAX


def keras_loop(line: UserLine, scene: Scene) -> Remedy | None:
    method = line.api.rsplit(".", 1)[-1]
    model = receiver(line.code, method) or "model"
    arg = first_argument(line.code, method) or "x"
    at = line.location
    if scene.backend == JAX.name and method in ("predict", "fit", "evaluate"):
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
            f"Use `{counted}.cardinality()` for its length: {quoted(line)} reads the whole "
            f"dataset only to count it (or count once, {outside(line)}).",
        )
    return Remedy(
        "data-iterate",
        f"Make the iterator once, `it = iter(ds)` {outside(line)}, and call `next(it)` at "
        f"{line.location}: a new iterator every iteration starts the pipeline from scratch.",
    )


def data_read(line: UserLine, scene: Scene) -> Remedy | None:
    """Reading a dataset is the pipeline's business, except reading it only to count it."""
    return data_iterate(line, scene) if counted_dataset(line.code) is not None else None


def weights_host(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "weights-host",
        f"Update the variables in place, inside a `tf.function`, instead of {quoted(line)}, "
        "which copies every weight through NumPy on every call: "
        "`for t, s in zip(target.weights, source.weights): t.assign(tau * s + (1 - tau) * t)`.",
    )


def to_host(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "to-host",
        f"Keep the value of {quoted(line)} a tensor and read it every N iterations: reading "
        "it waits for the computation on every one.",
    )


def convert(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "convert",
        f"Convert the data of {quoted(line)} into a tensor once, {outside(line)} "
        "(`x = tf.constant(x, tf.float32)`), and pass the tensor here.",
    )


def summary(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "summary",
        f"Write the summary of {quoted(line)} every N steps (`if step % 100 == 0:`), not on "
        "every step.",
    )


def save(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "save",
        f"Save less often than {quoted(line)} does: every N iterations, or once per epoch.",
    )


def clear(line: UserLine, scene: Scene) -> Remedy | None:
    return Remedy(
        "clear",
        f"Clear the session once, {outside(line)}, or not at all: {quoted(line)} clears it on "
        "every iteration, so every model and graph is built again after it.",
    )
