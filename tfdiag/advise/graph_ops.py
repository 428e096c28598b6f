"""What inside the step's graph is the cost, from the TF profiler's ops: an op that does
none of the model's math (a `tf.print` formatting a whole tensor every step), or a loop
the graph runs per element (`tf.map_fn`'s while loop), whose small ops each pay the
executor's overhead. Each is named by its op scope and, when the model's own layer classes
were recorded, the user's layer that made it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tfdiag.advise.evidence import graph_calls_per_iteration, pct
from tfdiag.advise.finding import Context
from tfdiag.records.catalog import HOST_OPS
from tfdiag.records.catalog.ops import (
    DATA_OP_PREFIX,
    LOOP_SCOPE,
    PER_ELEMENT_LOOPS,
    WRAPPING_SCOPES,
)
from tfdiag.records.probes import OpRow, TfProfile

_WRAPPING = WRAPPING_SCOPES
_LOOP = re.compile(LOOP_SCOPE)


@dataclass(frozen=True)
class GraphCost:
    """One cause inside the graph: the evidence lines, the fix's values, its share."""

    variant: str
    share: float
    evidence: tuple[str, ...]
    values: dict[str, str]


def _layer_of(ctx: Context, name: str) -> str | None:
    """``Inspect.call (model.py:55)`` for an op scoped ``…/inspect_1/PrintV2``: the user's
    layer recorded in the call's facts whose name is a scope of the op."""
    scopes = [s for s in name.split("/") if s not in _WRAPPING]
    layers = {k[len("layer.") :]: v for k, v in ctx.record.call.facts if k.startswith("layer.")}
    for scope in reversed(scopes[:-1]):
        for candidate in (scope, re.sub(r"_\d+$", "", scope)):
            if candidate in layers:
                return layers[candidate]
    return None


def _where(ctx: Context, name: str, scope: str | None = None) -> str:
    """The user's layer that made op ``name``, else its op ``scope`` (the op's own by
    default), without the call's wrapping scopes."""
    layer = _layer_of(ctx, name)
    if layer:
        return f"your layer `{layer}`"
    if scope is None:
        scope = "/".join(s for s in name.split("/")[:-1] if s not in _WRAPPING)
    return f"the op scope `{scope}`"


def host_op(ctx: Context, tf: TfProfile, wall_s: float) -> GraphCost | None:
    """Ops that do none of the model's math (``HOST_OPS``) taking ≥ ``min_host_op_share``
    of the iteration."""
    rows = [o for o in tf.top_ops if o.type in HOST_OPS]
    if not rows or wall_s <= 0:
        return None
    share = min(sum(o.self_s for o in rows) / tf.steps / wall_s, 1.0)
    if share < ctx.threshold("min_host_op_share"):
        return None
    top = max(rows, key=lambda o: o.self_s)
    api = HOST_OPS[top.type]
    where = _where(ctx, top.name)
    evidence = (
        f"TF profiler: `{top.type}` ops (`{api}`) inside the step take {pct(share)} of the "
        f"iteration: `{top.name}`, {top.occurrences / tf.steps:.3g}× per iteration, from "
        f"{where}",
    )
    return GraphCost("host-op", share, evidence, {"api": api, "op": top.type, "where": where})


def _loop_scope(name: str) -> str:
    """``sequential/pairwise_features/map`` for any op of that loop, forward or gradient."""
    head = _LOOP.split(name, maxsplit=1)[0]
    return "/".join(s for s in head.split("/") if s not in _WRAPPING)


def _loop_api(scope: str) -> str | None:
    """``tf.map_fn`` for a loop scoped ``…/map`` (``map_1``): one that runs per element."""
    return PER_ELEMENT_LOOPS.get(re.sub(r"_\d+$", "", scope.rsplit("/", 1)[-1]))


def graph_loop(ctx: Context, tf: TfProfile) -> GraphCost | None:
    """A per-element loop inside the step's graph (``tf.map_fn``): its ops run
    ≥ ``min_loop_iterations`` times per graph call and take ≥ ``min_loop_share`` of the
    model's op time (tf.data's left out), and the graph calls are ≥ ``min_loop_graph_share``
    of the steady state — the rest of their
    time, outside the ops' kernels, is the executor running the loop's small ops one by one."""
    report, analysis = ctx.record, ctx.analysis
    loops: dict[str, list[OpRow]] = {}
    for o in tf.top_ops:
        if _LOOP.search(o.name) and _loop_api(_loop_scope(o.name)) is not None:
            loops.setdefault(_loop_scope(o.name), []).append(o)
    op_s = sum(o.self_s for o in tf.top_ops if not o.name.startswith(DATA_OP_PREFIX))
    calls = graph_calls_per_iteration(report, analysis) * tf.steps
    if not loops or op_s <= 0 or calls <= 0:
        return None
    scope, rows = max(loops.items(), key=lambda kv: sum(o.self_s for o in kv[1]))
    # The loop's own ops, and its machinery beside the body (the TensorArray that gathers
    # its results): every model op inside its scope.
    inside = [o for o in tf.top_ops if f"{scope}/" in o.name and o not in rows]
    loop_share = sum(o.self_s for o in (*rows, *inside)) / op_s
    per_call = max(o.occurrences for o in rows) / calls
    if loop_share < ctx.threshold("min_loop_share") or per_call < ctx.threshold(
        "min_loop_iterations"
    ):
        return None
    graph_s = sum(analysis.steady.functions[g].cum_s for g in analysis.with_role("graph-call"))
    share = min(analysis.of_steady(graph_s), 1.0)
    if share < ctx.threshold("min_loop_graph_share"):
        return None
    api = _loop_api(scope) or ""
    where = _where(ctx, rows[0].name, scope)
    evidence = (
        f"the step's graph runs a loop: the ops of `{scope}/while` (`{api}`) ran "
        f"{per_call:.3g}× per graph call, {pct(loop_share)} of the op time, from {where}",
        f"the graph calls are {pct(share)} of steady-state time; outside the ops' own "
        "time, that is the executor running the loop's small ops one at a time",
    )
    return GraphCost("graph-loop", share, evidence, {"api": api, "where": where})


def metric_ops(ctx: Context, tf: TfProfile) -> GraphCost | None:
    """A compiled metric sized to do a lot of work per update (``AUC(num_thresholds=8000)``:
    the call's facts name its large configuration numbers) while the step's ops outside
    every layer and the optimizer (no scope of their own: the metrics' updates) take
    ≥ ``min_metric_share`` of the model's op time."""
    sized = [(k[len("metric.") :], v) for k, v in ctx.record.call.facts if k.startswith("metric.")]
    sized = [(name, v) for name, v in sized if not v.endswith("()")]
    if not sized:
        return None
    ops = [o for o in tf.top_ops if not o.name.startswith(DATA_OP_PREFIX)]
    op_s = sum(o.self_s for o in ops)
    bare = [o for o in ops if not [s for s in o.name.split("/")[:-1] if s not in _WRAPPING]]
    if op_s <= 0 or not bare:
        return None
    share = sum(o.self_s for o in bare) / op_s
    if share < ctx.threshold("min_metric_share"):
        return None
    name, metric = sized[0]
    kinds = ", ".join(sorted({f"`{o.type}`" for o in bare[:4]}))
    evidence = (
        f"TF profiler: ops outside the model's layers and its optimizer ({kinds}: the "
        f"metrics' updates) take {pct(share)} of the op time, and the model compiles "
        f"`{metric}` (`{name}`), sized to do that much work on every step",
    )
    setting = metric.split("(", 1)[1].split("=", 1)[0]
    return GraphCost("metric", share, evidence, {"metric": metric, "setting": setting})
