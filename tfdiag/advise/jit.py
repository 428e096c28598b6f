"""JAX recompilation: a ``jax.jit`` function traced and compiled again on the steady calls.

The same mechanism as TensorFlow's retracing (a Python value, a shape or a new function
object in the cache key), so the same finding, ``per-iteration-tracing``, with the cause read
from JAX's own cache-miss explanation (:mod:`tfdiag.capture.jit` records it) and the fix in
JAX's terms (the ``jax:`` texts of the findings table).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from tfdiag.advise.evidence import pct
from tfdiag.advise.finding import Context, Detection
from tfdiag.records.catalog.jax import JIT_STEPS
from tfdiag.records.jit import JitCompile
from tfdiag.records.paths import is_user_code
from tfdiag.records.units import fmt_s

#: JAX's cause (:data:`tfdiag.records.jit.CAUSES`) → the finding's variant.
_VARIANTS = {
    "static": "static",
    "shape": "shape",
    "dtype": "dtype",
    "weak-type": "python-value",
    "structure": "python-structure",
    "new-function": "new-function",
}


def _sample(values: list[str], limit: int = 4) -> str:
    seen = list(dict.fromkeys(v for v in values if v))
    return ", ".join(seen[:limit]) + (", …" if len(seen) > limit else "")


def _group(compiles: tuple[JitCompile, ...]) -> dict[str, list[JitCompile]]:
    """The steady calls' compilations by function, a repeat of a function object JAX had
    never seen counted as a new function (``jax.jit(f)`` made again)."""
    seen: set[str] = {c.function for c in compiles if c.call == 0}
    out: dict[str, list[JitCompile]] = {}
    for c in compiles:
        if c.call == 0:
            continue
        if c.cause == "first" and (c.function in seen or c.function in out):
            c = JitCompile(**{**c.__dict__, "cause": "new-function"})
        out.setdefault(c.function, []).append(c)
        seen.add(c.function)
    return out


def per_iteration_compiles(ctx: Context) -> Detection | None:
    """``jax.jit`` compilations in ≥ ``min_calls_per_iteration`` per steady iteration, for a
    Python value, a structure or a dtype (a new shape is ``xla-compile-per-shape``'s, a new
    function object ``model-rebuilt-per-call``'s, of which these traces are part)."""
    found = _recompiles(ctx)
    if found is None or found[0] == "shape":
        return None
    cause, d = found
    return replace(d, part_of="model-rebuilt-per-call") if cause == "new-function" else d


def compile_per_shape(ctx: Context) -> Detection | None:
    """A jitted function compiled again for each new input shape, ≥ ``min_share`` of the
    steady state: on JAX a new shape is a new trace and a new XLA executable."""
    found = _recompiles(ctx)
    if found is None or found[0] != "shape" or found[1].impact < ctx.threshold("min_share"):
        return None
    return found[1]


def rebuilt_function(ctx: Context) -> Detection | None:
    """A jitted function made anew on every call (``jax.jit(f)`` in the loop, a lambda):
    JAX has never seen the function object, so it traces and compiles it each time."""
    found = _recompiles(ctx)
    if found is None or found[0] != "new-function" or found[1].impact < ctx.threshold("min_share"):
        return None
    return replace(found[1], variant="function")


def _dims(value: str) -> tuple[str, ...]:
    inside = value.partition("[")[2].partition("]")[0]
    return tuple(inside.split(",")) if inside else ()


def _varying(shapes: list[str]) -> set[int]:
    """The dimensions that differ between the shapes (of one rank)."""
    dims = [_dims(s) for s in shapes if s]
    return {k for d in dims for k in range(len(d)) if len(d) == len(dims[0]) and d[k] != dims[0][k]}


def _what_changes(shapes: list[str]) -> str:
    """Which dimension of a Keras step's batch varies: its first (the batch size), or
    another (a sequence length)."""
    varying = _varying(shapes)
    if varying == {0}:
        return (
            "the batch size changes (requests of varying rows, a batch size that differs "
            "between calls, or a last partial batch)"
        )
    if varying and 0 not in varying:
        return f"dimension {min(varying)} changes (a varying sequence length)"
    return "its shape changes between calls"


#: Compilations per steady iteration from which a function recompiles on every call.
_MIN_PER_ITERATION = 0.5


def _recompiles(ctx: Context) -> tuple[str, Detection] | None:
    """The function JAX compiled most on the steady calls, when ≥ 0.5× per iteration: its
    cause and its detection."""
    record, analysis = ctx.record, ctx.analysis
    steady = _group(record.jit_compiles)
    if not steady or analysis.steady_s <= 0 or analysis.iterations <= 0:
        return None
    name, compiles = max(steady.items(), key=lambda kv: (len(kv[1]), sum(c.seconds for c in kv[1])))
    per = len(compiles) / analysis.iterations
    if per < ctx.thresholds.get("min_calls_per_iteration", _MIN_PER_ITERATION):
        return None
    total_s = sum(c.seconds for cs in steady.values() for c in cs)
    share = min(analysis.of_steady(total_s), 1.0)
    return recompiled(
        name,
        compiles,
        share,
        f"in {analysis.iterations} steady-state calls ({per:.3g}× per iteration)",
        "of steady-state time with every recompiled function",
    )


def script_recompiles(compiles: tuple[JitCompile, ...]) -> dict[str, list[JitCompile]]:
    """A whole script's compilations (``tfdiag run``: no calls to count) by function, each
    function's first left out (its one compile), a repeat of a function object JAX had
    never seen counted as a new function."""
    seen: set[str] = set()
    out: dict[str, list[JitCompile]] = {}
    for c in compiles:
        if c.function not in seen:
            seen.add(c.function)
            continue
        if c.cause == "first":
            c = replace(c, cause="new-function")
        out.setdefault(c.function, []).append(c)
    return out


def recompiled(
    name: str, compiles: list[JitCompile], share: float, counted: str, of: str
) -> tuple[str, Detection]:
    """The cause and detection of ``name``'s recompiles: ``counted`` says over what (``in 9
    steady-state calls (1× per iteration)``), ``of`` what ``share`` is a share of."""
    each = sum(c.seconds for c in compiles) / len(compiles)
    top = compiles[-1]
    where = f"`{name}`"
    if top.file and is_user_code(top.file):
        where += f" ({top.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{top.line})"
    evidence = [
        f"JAX compiled {where} {len(compiles)}× {counted}, {fmt_s(each)} each (trace, "
        f"lowering, XLA compile): {pct(share)} {of}",
    ]
    causes = Counter(c.cause for c in compiles if c.cause)
    cause = causes.most_common(1)[0][0] if causes else ""
    variant = _VARIANTS.get(cause)
    why = [c for c in compiles if c.cause == cause]
    argument = why[0].argument if why else ""
    if argument and not argument.startswith("positional"):
        argument = f"`{argument}`"
    keras_step = name in JIT_STEPS and not (top.file and is_user_code(top.file))
    if cause == "static":
        evidence.append(
            f"{argument} is a static argument (`static_argnums`/`static_argnames`) whose "
            f"value changes: {_sample([c.now for c in why]) or 'a new one on each call'} — each "
            "new value compiles anew"
        )
    elif cause == "shape" and keras_step:
        # a sequence length is padded to a few lengths; rows are padded to a few batch
        # sizes, which must not train (training) or are dropped from the outputs (inference)
        varying = _varying([why[0].before] + [c.now for c in why])
        if varying and 0 not in varying:
            variant = "keras-step-length"
        else:
            variant = "keras-step-train" if "train" in name else "keras-step"
        evidence.append(
            f"Keras' jitted `{name}` got `{why[0].argument or 'data'}` of a new shape each time: "
            f"{_sample([why[0].before] + [c.now for c in why])} — "
            + _what_changes([why[0].before] + [c.now for c in why])
        )
    elif cause in ("shape", "dtype", "weak-type"):
        what = {"shape": "shape", "dtype": "dtype", "weak-type": "kind"}[cause]
        values = _sample([why[0].before] + [c.now for c in why])
        evidence.append(
            f"argument {argument} changes {what}: {values}"
            " — JAX compiles once per input shape and dtype"
            + (
                " (a Python scalar is weakly typed, an array is not)"
                if cause == "weak-type"
                else ""
            )
        )
    elif cause == "structure":
        evidence.append(
            f"argument {argument} is a Python container whose structure changes: each "
            "structure compiles anew"
        )
    elif cause == "new-function":
        evidence.append(
            f"`{name}` is a function object JAX has not seen before on each call: the "
            "`jax.jit` wrapper (or the function it wraps) is made anew every time"
        )
    elif cause == "context":
        evidence.append("a JAX config or context manager differs between the calls")
    else:
        evidence.append(
            "JAX did not say why (it explains the cache misses of your own functions only): "
            "an input's shape, dtype or a Python value changed"
        )
    return cause, Detection(
        share,
        tuple(evidence),
        variant=variant,
        values={
            "function": name,
            "argument": argument or "an argument",
            "dimension": f"{argument or 'an input'} (its shape)",
        },
        data=(("jit_function", name), ("jit_compiles", len(compiles))),
    )
