"""Graphs traced again and again: which function, how often, and why (the argument, the
dimension or the type that changes; a new function object; tf.data's own functions)."""

from __future__ import annotations

import re
from collections import Counter

from tfdiag.advise.evidence import (
    category_of,
    one_long_call,
    pct,
    per_iteration,
    rebuilt_between_calls,
    times,
)
from tfdiag.advise.finding import Context, Detection
from tfdiag.analysis.pipeline import Analysis
from tfdiag.records.catalog import Category
from tfdiag.records.paths import is_user_code, normalize_path
from tfdiag.records.report import RunRecord
from tfdiag.records.traces import TraceEvent


def _caller_chain(analysis: Analysis, i: int, stop: Category) -> list[int]:
    """Walk the heaviest caller edges up from ``i`` while frames are ``stop``, wrappers or
    tf.function's own machinery (the ``function-machinery`` role)."""
    chain = []
    seen = {i}
    fn = analysis.steady.functions[i]
    while fn.callers:
        edge = max(fn.callers, key=lambda e: (e.cum_s, e.calls))
        if edge.caller in seen:
            break
        seen.add(edge.caller)
        chain.append(edge.caller)
        plumbing = analysis.has_role(edge.caller, "function-machinery")
        if category_of(analysis, edge.caller) not in (stop, Category.WRAPPER) and not plumbing:
            break
        fn = analysis.steady.functions[edge.caller]
    return chain


# -- why a function is traced again -----------------------------------------------------

_LITERAL = re.compile(r"^Literal\[(.*)\]$")
_SHAPE = re.compile(r"shape=\(([^)]*)\)")


def _shape(spec: str) -> tuple[str, ...] | None:
    m = _SHAPE.search(spec)
    if m is None:
        return None
    return tuple(d.strip() for d in m.group(1).split(",") if d.strip())


def _sample(values: list[str], limit: int = 4) -> str:
    shown = ", ".join(values[:limit])
    return shown + (", …" if len(values) > limit else "")


def retrace_cause(traces: list[TraceEvent]) -> tuple[str, str] | None:
    """``(variant, evidence)``: what differs between the traces of one function.

    Variants: ``python-value`` (a Python number or string argument that changes),
    ``python-structure`` (a list/dict argument), ``shape`` (a tensor's shape), ``dtype``.
    """
    if len(traces) < 2:
        return None
    names = [n for n, _ in traces[0].params]
    for k, name in enumerate(names):
        values = [t.params[k][1] for t in traces if len(t.params) > k]
        if len(set(values)) < 2:
            continue
        literals = [m.group(1) for v in values if (m := _LITERAL.match(v))]
        if len(literals) == len(values):
            return (
                "python-value",
                f"argument `{name}` is a Python value that changes: {_sample(literals)} — each "
                "new value is traced into a new graph",
            )
        if all(v.startswith(("List[", "Tuple[", "Dict[")) for v in values):
            return (
                "python-structure",
                f"argument `{name}` is a Python list/dict whose contents change "
                f"({len(set(values))} different ones): each is traced into a new graph",
            )
        shapes = [_shape(v) for v in values]
        if all(s is not None for s in shapes):
            dims = [s for s in shapes if s is not None]
            varying = [
                d
                for d in range(max(len(s) for s in dims))
                if len({s[d] if d < len(s) else None for s in dims}) > 1
            ]
            if varying:
                d = varying[0]
                seen = [s[d] if d < len(s) else "-" for s in dims]
                return (
                    "shape",
                    f"argument `{name}` changes shape in dimension {d}: {_sample(seen)} — each "
                    "new shape is traced into a new graph",
                )
            return (
                "dtype",
                f"argument `{name}` changes type: {_sample(sorted(set(values)))}",
            )
    return None


def _changing(traces: list[TraceEvent]) -> str | None:
    """The name of the first parameter whose trace type differs between the traces."""
    for k, (name, _) in enumerate(traces[0].params):
        if len({t.params[k][1] for t in traces if len(t.params) > k}) > 1:
            return name
    return None


def _steady_traces(record: RunRecord) -> dict[tuple[str, str, int], list[TraceEvent]]:
    """The traces of the steady calls, by traced function (file and line of its source)."""
    out: dict[tuple[str, str, int], list[TraceEvent]] = {}
    for e in record.traces:
        if e.call > 0:
            out.setdefault((e.function, e.file, e.line), []).append(e)
    return out


def _is_data_function(e: TraceEvent) -> bool:
    return e.name.startswith("Dataset_") or "StructuredFunctionWrapper" in e.function


def per_iteration_tracing(ctx: Context) -> Detection | None:
    report, analysis = ctx.record, ctx.analysis
    tracers = [
        i
        for i in analysis.with_role("tracer")
        if category_of(analysis, i) is Category.GRAPH_BUILDING
        and analysis.steady_calls_per_iteration(i) >= ctx.threshold("min_calls_per_iteration")
    ]
    if not tracers or analysis.steady_s <= 0:
        return None
    steady = analysis.steady.functions
    i = max(tracers, key=lambda t: (steady[t].primitive_calls, steady[t].cum_s))
    fn = steady[i]
    share = analysis.steady_share(Category.GRAPH_BUILDING)
    cum_share = min(analysis.of_steady(fn.cum_s), 1.0)
    evidence = [
        f"`{fn.short_name}` runs {times(analysis, i)} per iteration "
        f"({fn.primitive_calls} traces in {analysis.iterations} steady-state calls): "
        f"{pct(cum_share)} of steady-state time (cumulative)",
        f"graph building self time: {pct(share)} of steady-state time (non-overlapping)",
    ]
    variant, values = _cause(report, analysis, i, evidence)
    if variant == "via-data" and one_long_call(report, analysis):
        return None  # the tf.data traces of one long call's pipeline: set-up paid once
    return Detection(
        max(cum_share, share),
        tuple(evidence),
        variant=variant,
        values=values,
        part_of=_PART_OF.get(variant),
        culprit=i,
    )


#: Retrace causes that another finding's fix removes.
_PART_OF = {
    "via-data": "per-call-input-pipeline",
    "new-function": "model-rebuilt-per-call",
    "recompiled": "model-rebuilt-per-call",
    "new-model": "model-rebuilt-per-call",
}


def _cause(
    report: RunRecord, analysis: Analysis, i: int, evidence: list[str]
) -> tuple[str, dict[str, str]]:
    """Why the traces happen, from the recorded traces when there are some (the call
    counts' caller chain otherwise); adds its evidence lines."""
    by_function = _steady_traces(report)
    users = {k: v for k, v in by_function.items() if k[1] and is_user_code(k[1])}
    if users:
        (name, file, line), traces = max(users.items(), key=lambda kv: len(kv[1]))
        where = f"`{name}` ({file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line})"
        found = retrace_cause(traces)
        if found is not None:
            variant, text = found
            evidence.append(f"{where} was traced {len(traces)}× in the steady calls; {text}")
            return variant, {"function": name, "argument": _changing(traces) or "the value"}
        signatures = Counter(t.params for t in traces)
        if len(signatures) == 1:
            evidence.append(
                f"{where} was traced {len(traces)}× in the steady calls with the same argument "
                "types: a new `tf.function` object is made for every call"
            )
            return "new-function", {"function": name}
    if by_function and all(_is_data_function(t) for ts in by_function.values() for t in ts):
        evidence.append("the traced functions are tf.data's (`Dataset.map`/`flat_map` functions)")
        return "via-data", {}
    keras = {k: v for k, v in by_function.items() if "keras" in normalize_path(k[1])}
    if keras:
        (name, _, _), traces = max(keras.items(), key=lambda kv: len(kv[1]))
        found = retrace_cause(traces)
        if found is not None:
            evidence.append(f"Keras's `{name}` is traced again: {found[1]}")
            return "keras-" + found[0], {"function": name}
    chain = _caller_chain(analysis, i, Category.GRAPH_BUILDING)
    if chain:
        origin = analysis.steady.functions[chain[-1]]
        evidence.append(f"traced from `{origin.short_name}`")
        if category_of(analysis, chain[-1]) is Category.INPUT_PIPELINE:
            return "via-data", {}
    compiles = per_iteration(
        analysis,
        (
            (j, fn)
            for j, fn in enumerate(report.profile.functions)
            if fn.name in ("Trainer.compile", "Model.compile")
            and "keras" in normalize_path(fn.file)
        ),
    )
    if compiles >= 0.5:
        evidence.append(
            f"`compile()` runs {compiles:.3g}× per iteration: each one drops the step "
            "functions Keras traced, so they are traced again"
        )
        return "recompiled", {}
    rebuilt = rebuilt_between_calls(report)
    if rebuilt is not None:
        evidence.append(f"{rebuilt.line}: each has no traced step yet")
        return ("recompiled" if rebuilt.kind == "compile" else "new-model"), {}
    return "retrace", {}


# -- eager ----------------------------------------------------------------------------
