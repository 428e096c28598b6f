"""XLA compilation per new input shape: with ``jit_compile=True`` a graph traced once to a
``(None, …)`` signature still compiles one XLA executable per *concrete* shape it is
called with, inside the graph call (no retrace for the trace recorder or cProfile to see).
The TF profiler's XSpace has one ``*Compiler::RunBackend`` event per compilation
(:func:`tfdiag.analysis.xprof.xla_compiles`); this detector reads them."""

from __future__ import annotations

import re

from tfdiag.advise.finding import Context, Detection
from tfdiag.records.probes import XlaCompile
from tfdiag.records.report import RunRecord
from tfdiag.records.units import fmt_pct0, fmt_s

_SHAPE = re.compile(r"shape=\(([^)]*)\)")


def dynamic_axes(record: RunRecord, function: str) -> tuple[int, ...]:
    """The axes traced as ``None`` in the graphs of ``function`` (the trace recorder's
    parameter types): the dimensions a compiled executable is specialised on."""
    axes: set[int] = set()
    for event in record.traces:
        if not (event.function.endswith(function) or event.name.endswith(function)):
            continue
        for _, annotation in event.params:
            for dims in _SHAPE.findall(annotation):
                parts = [p.strip() for p in dims.split(",") if p.strip()]
                axes.update(i for i, p in enumerate(parts) if p == "None")
    return tuple(sorted(axes))


def _dimension(axes: tuple[int, ...]) -> str:
    if not axes:
        return "a dimension of the inputs (the batch size or a sequence length)"
    if axes == (0,):
        return "the batch dimension (axis 0)"
    shown = ", ".join(str(a) for a in axes)
    return f"axis {shown} of the inputs" if len(axes) == 1 else f"axes {shown} of the inputs"


def xla_compile_per_shape(ctx: Context) -> Detection | None:
    probes = ctx.record.probes
    tf = probes.tf_profile if probes is not None else None
    if tf is None or not tf.xla_compiles or not tf.iteration_s:
        return None
    traced_s = sum(tf.iteration_s)
    compile_s = sum(c.seconds for c in tf.xla_compiles)
    top: XlaCompile = tf.xla_compiles[0]
    steps_with = max(c.steps for c in tf.xla_compiles)
    share = min(compile_s / traced_s, 1.0) if traced_s > 0 else 0.0
    if steps_with < ctx.threshold("min_steps_share") * tf.steps:
        return None  # one compile (a ragged last batch): a one-time cost
    if share < ctx.threshold("min_share"):
        return None
    dimension = _dimension(dynamic_axes(ctx.record, top.function))
    evidence = (
        f"TF profiler: XLA compiled `{top.function}` {top.count}× in {steps_with} of "
        f"{tf.steps} traced iterations, {fmt_s(top.seconds / max(top.count, 1))} each: "
        f"{fmt_s(compile_s)} of their {fmt_s(traced_s)} ({fmt_pct0(share)})",
        f"the graph was not retraced for it: one XLA executable is compiled per concrete "
        f"input shape, and {dimension} changes between calls",
    )
    return Detection(
        share,
        evidence,
        values={"function": top.function, "dimension": dimension},
        data=(("xla_function", top.function), ("xla_compiles", top.count)),
    )
