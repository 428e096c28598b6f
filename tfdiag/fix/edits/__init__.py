"""The edit kinds, one module each, keyed by the finding's remedy: the table a new kind
is one row of. A key is a glob on the remedy key (:mod:`tfdiag.advise.remedies`:
``construct:tf.function``; a finding's own text: ``per-call-input-pipeline:predict``)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from tfdiag.fix.edits.base import Edit, EditFn, Files, NoEdit, Target
from tfdiag.fix.edits.constant import tf_constant
from tfdiag.fix.edits.decorate import tf_function
from tfdiag.fix.edits.fit import one_fit
from tfdiag.fix.edits.hoist import hoist
from tfdiag.fix.edits.jit_static import jit_static
from tfdiag.fix.edits.jit_step import jax_jit
from tfdiag.fix.edits.pipeline import tune_pipeline
from tfdiag.fix.edits.predict import predict_on_batch
from tfdiag.fix.edits.switch import remove_switch


@dataclass(frozen=True)
class EditKind:
    """One row: the remedies it answers and the function that writes the edit."""

    name: str
    remedies: tuple[str, ...]
    edit: EditFn
    does: str


EDITS: tuple[EditKind, ...] = (
    EditKind(
        "predict-on-batch",
        (
            "keras-loop:predict",
            "per-call-input-pipeline:predict*",
            "per-call-input-pipeline:jax:predict*",
        ),
        predict_on_batch,
        "`model.predict(x)` per batch → `model.predict_on_batch(x)`",
    ),
    EditKind(
        "one-fit",
        ("keras-loop:fit", "per-call-input-pipeline:fit", "per-call-input-pipeline:jax:fit"),
        one_fit,
        "`fit` called once per epoch in a loop → one `fit` of every epoch",
    ),
    EditKind(
        "hoist",
        ("construct", "construct:*", "setup", "setup:*"),
        hoist,
        "a construction or setup call run every iteration → moved before the loop or function",
    ),
    EditKind(
        "remove-switch",
        ("debug-switch:*", "eager-execution:run-eagerly*", "*:run-eagerly*"),
        remove_switch,
        "a debugging switch left on (`run_eagerly=True`, `run_functions_eagerly(True)`, "
        "`enable_debug_mode()`, `dynamic=True`) → removed",
    ),
    EditKind(
        "tf-function",
        ("eager:tf-function-step", "eager:tf-function"),
        tf_function,
        "an eager step → `@tf.function` on the function that holds it",
    ),
    EditKind(
        "tf-constant",
        ("per-iteration-tracing:python-value", "per-iteration-tracing:python-value@line"),
        tf_constant,
        "a Python number passed to a retracing `tf.function` → `tf.constant(...)` at the call",
    ),
    EditKind(
        "jax-jit",
        ("eager:jit-step", "eager:jit"),
        jax_jit,
        "an eager JAX step (Keras on JAX) → `@jax.jit` on the function that holds it",
    ),
    EditKind(
        "jit-static",
        ("per-iteration-tracing:jax:static",),
        jit_static,
        "a `jax.jit` static argument whose value changes on every call → no longer static "
        "(`static_argnums` / `static_argnames` without it)",
    ),
    EditKind(
        "tune-pipeline",
        ("input-bound:map*", "input-bound:other", "input-bound:py-function"),
        tune_pipeline,
        "a `tf.data` chain → `num_parallel_calls=tf.data.AUTOTUNE` on its `map`, "
        "`.prefetch(tf.data.AUTOTUNE)` last",
    ),
)


def kind_for(remedy: str | None) -> EditKind | None:
    """The edit kind that answers ``remedy`` (None: none does: the advice stays advice)."""
    if not remedy:
        return None
    for kind in EDITS:
        if any(fnmatch.fnmatchcase(remedy, pattern) for pattern in kind.remedies):
            return kind
    return None


__all__ = ["EDITS", "Edit", "EditKind", "Files", "NoEdit", "Target", "kind_for"]
