"""Debugging switches as the cause of a finding: a setting the record shows on, and the
user's line that sets it, become the finding's line and its remedy (remove that setting).

A process-wide switch (``run_functions_eagerly``, tf.data's debug mode,
``enable_check_numerics``, JAX's ``jax_disable_jit``/``jax_debug_nans``) is read when the
run was captured; a per-model one (``run_eagerly=True``, a ``dynamic=True`` layer) is taken
as the cause only where the finding's own evidence is a Keras step run as Python, and which
one by the model's facts, else by the line found in the user's files.
"""

from __future__ import annotations

from tfdiag.analysis.lines import UserLine
from tfdiag.records.lines import SwitchLine
from tfdiag.records.report import RunRecord

#: The findings a process-wide switch explains when it is on.
EXPLAINS: dict[str, frozenset[str]] = {
    "tf-functions-eagerly": frozenset({"eager-execution"}),
    "tf-data-debug": frozenset({"input-bound", "python-in-graph", "per-step-overhead"}),
    "tf-check-numerics": frozenset({"eager-execution", "compute-bound", "no-known-cause"}),
    "jax-disable-jit": frozenset(
        {"eager-execution", "compute-bound", "no-known-cause", "per-call-input-pipeline"}
    ),
    "jax-debug-nans": frozenset({"eager-execution", "compute-bound", "no-known-cause"}),
}

#: What each switch is called in the fix when its line was not found.
SPELLED = {
    "tf-functions-eagerly": "tf.config.run_functions_eagerly(True)",
    "tf-data-debug": "tf.data.experimental.enable_debug_mode()",
    "tf-check-numerics": "tf.debugging.enable_check_numerics()",
    "jax-disable-jit": "jax.config.update('jax_disable_jit', True)",
    "jax-debug-nans": "jax.config.update('jax_debug_nans', True)",
    "run-eagerly": "run_eagerly=True",
    "dynamic": "dynamic=True",
    "eager-step": "run_eagerly=True",
}


def _as_line(s: SwitchLine) -> UserLine:
    return UserLine(
        file=s.file,
        line=s.line,
        code=s.code,
        function="",
        api=s.switch,
        nature="debug-switch",
        catalogued=True,
        callee=None,
        api_index=None,
        calls_per_iteration=None,
        share=0.0,
        exact=True,
    )


def _found(record: RunRecord) -> dict[str, SwitchLine]:
    lines = record.lines
    return {s.switch: s for s in lines.switches} if lines is not None else {}


def live_switch(record: RunRecord, family: str) -> UserLine | None:
    """A process-wide switch the run had on that explains a finding of ``family``."""
    found = _found(record)
    for name, families in EXPLAINS.items():
        if family in families and name in found:
            return _as_line(found[name])
    if family == "eager-execution" and record.call.fact("functions_run_eagerly") == "True":
        return _as_line(found.get("tf-functions-eagerly", SwitchLine("tf-functions-eagerly")))
    return None


def model_switch(record: RunRecord) -> UserLine:
    """Which per-model switch runs a Keras step as Python: a ``dynamic=True`` layer when the
    model says it has one (or only that line is found), else ``run_eagerly=True``."""
    found = _found(record)
    dynamic = record.call.fact("dynamic") == "True"
    set_by_user = record.call.fact("run_eagerly_set") == "True"
    if dynamic and not set_by_user:
        name = "dynamic"
    elif set_by_user or "run-eagerly" in found:
        name = "run-eagerly"
    elif "dynamic" in found:
        name = "dynamic"
    elif record.call.fact("run_eagerly") == "True" and record.call.fact("dynamic") != "True":
        name = "run-eagerly"  # Keras 3: no dynamic layers, so the setting is run_eagerly's
    else:
        name = "eager-step"  # the record shows the step ran as Python, not which setting
    return _as_line(found.get(name, SwitchLine(name)))
