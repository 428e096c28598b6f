"""What the JAX profiler pass records: the traced block's XLA ops and its Python/XLA split.

On Keras' JAX backend the observe pass traces its first block with ``jax.profiler`` (the
XSpace xprof reads), read by :mod:`tfdiag.analysis.xspace`. xprof's own converters give
nothing for XLA:CPU ops (``framework_op_stats``, ``hlo_stats`` and ``op_profile`` are empty
for a JAX trace on jax 0.10), so the record is built from the XSpace's events: each XLA op
the PjRt CPU client ran (an event with an ``hlo_op`` stat, on the ``tf_XLAPjRtCpuClient`` and
``tf_XLAEigen`` threads), named after the jaxpr path of its HLO metadata (``op_name``:
``jit(predict_step)/conv2d/conv_general_dilated``, which names the Keras layer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfdiag.records.fields import Obj, count, items, row, seconds, text
from tfdiag.records.numbers import median


@dataclass(frozen=True)
class XlaOp:
    """One XLA op (an HLO instruction of a compiled module) over the traced steps.

    ``category`` is what it computes (``convolution``, ``dot``, ``fusion``, ``copy`` …: a
    fusion is named after the heaviest kind of instruction it fuses); ``op_name`` the jaxpr
    path in its HLO metadata (empty when XLA kept none); ``layers`` the Keras layers of a
    fusion's instructions of that kind (several: a chain of layers fused into one op)."""

    name: str
    module: str
    category: str
    op_name: str
    occurrences: int
    self_s: float
    layers: tuple[str, ...] = ()


@dataclass(frozen=True)
class JaxProfile:
    """The traced block, as its XSpace read.

    ``step_s`` are the traced steps' wall times in the trace; ``xla_busy_s`` the time
    within them when at least one XLA op ran (their union over threads), ``xla_op_s`` the
    ops' time summed over threads; both totals over all steps. ``ops`` heaviest first, at
    most :data:`tfdiag.analysis.xspace.TOP_OPS`; ``op_count`` how many distinct ops ran.
    ``jit_calls`` is ``(jitted function, calls, seconds)`` of the calls Python made into
    compiled programs (``PjitFunction(...)`` events) inside the steps."""

    steps: int
    iteration_s: tuple[float, ...]
    step_s: tuple[float, ...]
    xla_busy_s: float
    xla_op_s: float
    ops: tuple[XlaOp, ...]
    op_count: int
    jit_calls: tuple[tuple[str, int, float], ...] = ()
    export_s: float = 0.0

    @property
    def median_s(self) -> float | None:
        return median(self.iteration_s)

    @property
    def wall_s(self) -> float:
        """The traced steps' wall time, all steps."""
        return sum(self.step_s)

    @property
    def python_s(self) -> float:
        """The steps' time with no XLA op running: Python, Keras, dispatch, waits."""
        return max(self.wall_s - self.xla_busy_s, 0.0)


def jax_profile_to_json(p: JaxProfile | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {
        "steps": p.steps,
        "iteration_s": list(p.iteration_s),
        "step_s": list(p.step_s),
        "xla_busy_s": p.xla_busy_s,
        "xla_op_s": p.xla_op_s,
        "ops": [
            [o.name, o.module, o.category, o.op_name, o.occurrences, o.self_s, list(o.layers)]
            for o in p.ops
        ],
        "op_count": p.op_count,
        "jit_calls": [list(c) for c in p.jit_calls],
        "export_s": p.export_s,
    }


def jax_profile_from_json(d: Obj | None) -> JaxProfile | None:
    """Raises:
    InputError: a part of the wrong type or out of range."""
    if d is None:
        return None
    ops = []
    for op in d.items("ops"):
        w = f"{d.at('ops')}[]"
        name, module, cat, op_name, n, own, *rest = row(op, w, range(6, 8))
        ops.append(
            XlaOp(
                text(name, w),
                text(module, w),
                text(cat, w),
                text(op_name, w),
                count(n, w),
                seconds(own, w),
                tuple(text(x, w) for x in items(rest[0], w)) if rest else (),
            )
        )
    calls = []
    for c in d.items("jit_calls"):
        w = f"{d.at('jit_calls')}[]"
        fn, n, secs = row(c, w, range(3, 4))
        calls.append((text(fn, w), count(n, w), seconds(secs, w)))
    return JaxProfile(
        steps=d.count("steps", lo=1, hi=10**9),
        iteration_s=d.series("iteration_s"),
        step_s=d.series("step_s"),
        xla_busy_s=d.seconds("xla_busy_s"),
        xla_op_s=d.seconds("xla_op_s"),
        ops=tuple(ops),
        op_count=d.count("op_count", 0),
        jit_calls=tuple(calls),
        export_s=d.seconds("export_s", 0.0),
    )
