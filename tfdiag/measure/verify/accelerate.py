"""``tfdiag.accelerate(model, example_x)``: a drop-in predictor that runs the fastest method
verified on this input signature.

The candidates (``predict``, ``predict_on_batch``, and on TensorFlow a ``tf.function`` of
``model(x, training=False)`` built once with the batch dimension left free, on Keras' JAX
backend a ``jax.jit`` of ``model.stateless_call`` built once, never loading TensorFlow) are timed
interleaved on ``example_x`` with compare's engine and checked against ``predict``'s output;
the fastest that checks out is chosen. Then ``predict`` and the choice are timed on larger
inputs (``example_x`` tiled 4×, 16×, ... up to ``max_rows``): from the first size where
``predict`` is faster, the predictor hands larger inputs to ``predict`` (the crossover).
Inputs of another signature (other feature shape or dtype, a list or dict) go to ``predict``.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from tfdiag.capture.environment import flavour_of, running_backend
from tfdiag.measure.check import output_mismatch
from tfdiag.measure.run import _quiet_retracing
from tfdiag.measure.subject import num_samples, to_numpy
from tfdiag.measure.timing import measure
from tfdiag.measure.validate import check_data, check_model
from tfdiag.records.catalog.backends import JAX
from tfdiag.records.clock import Clock
from tfdiag.records.errors import InputError
from tfdiag.records.numbers import median
from tfdiag.records.units import fmt_ratio, fmt_s

PREDICT, ON_BATCH, GRAPH, JIT = "predict", "predict_on_batch", "tf.function", "jit stateless_call"
#: example_x is tiled by this factor, again and again up to ``max_rows``, for the crossover.
SCALE = 4
DEFAULT_MAX_ROWS = 8192
#: The crossover sizes are timed with fewer blocks: one warm-up call, three blocks.
CROSSOVER_TIMING = {"warmup": 1, "repeats": 3}


@dataclass
class Accelerated:
    """The predictor :func:`accelerate` returns: ``fast(x)`` → NumPy, like ``predict``."""

    model: Any
    method: str
    batch_size: int
    signature: tuple[tuple[int | None, ...], str]
    crossover_rows: int | None
    #: rows → method → median seconds per call, as measured.
    measured: dict[int, dict[str, float]] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    graph: Any = None

    def matches(self, x: Any) -> bool:
        shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
        if shape is None or dtype is None or len(shape) < 1 or _layout(x) is not None:
            return False
        dname = str(getattr(dtype, "name", dtype))
        return (tuple(shape[1:]), dname) == (self.signature[0][1:], self.signature[1])

    def method_for(self, x: Any) -> str:
        """The method ``x`` is run with."""
        if not self.matches(x):
            return PREDICT
        if self.crossover_rows is not None and num_samples(x) >= self.crossover_rows:
            return PREDICT
        return self.method

    @property
    def chunk_rows(self) -> int:
        """The most rows the chosen method runs at once: the largest size measured. A larger
        input runs in chunks of it (one batch of 200,000 rows through a wide layer took
        gigabytes where ``predict`` took megabytes, #20.7)."""
        return max(self.measured) if self.measured else 1

    def __call__(self, x: Any) -> Any:
        method = self.method_for(x)
        if method == PREDICT:
            check_data(self.model, x, None)  # a clear line, not one from deep in the backend
            with _kept(self.model):
                return self.model.predict(x, batch_size=self.batch_size, verbose=0)
        n, step = num_samples(x), max(self.chunk_rows, 1)
        if n <= step:
            return self._run(method, x)
        return _concatenate([self._run(method, x[i : i + step]) for i in range(0, n, step)])

    def _run(self, method: str, x: Any) -> Any:
        if method in (GRAPH, JIT):
            return to_numpy(self.graph(x))
        return to_numpy(self.model.predict_on_batch(x))

    def explain(self) -> str:
        """What was chosen and why, with the figures measured."""
        rows = min(self.measured) if self.measured else 0
        at = self.measured.get(rows, {})
        base = at.get(PREDICT)
        lines = [
            f"accelerate: {self.method} for inputs of shape (n, {_dims(self)}) {self.signature[1]}"
        ]
        for name, t in sorted(at.items(), key=lambda kv: kv[1]):
            ratio = f", {fmt_ratio(base / t)} predict's speed" if base and t else ""
            ratio = "" if name == PREDICT else ratio
            lines.append(f"  {rows} rows: {name} {fmt_s(t)} per call{ratio}")
        for name, why in self.rejected.items():
            lines.append(f"  {name} not used: {why}")
        for n in sorted(self.measured):
            if n != rows:
                cells = ", ".join(f"{k} {fmt_s(v)}" for k, v in self.measured[n].items())
                lines.append(f"  {n} rows: {cells}")
        if self.method == PREDICT:
            lines.append("  predict itself is the fastest method that checks out here")
        elif self.crossover_rows is not None:
            lines.append(
                f"  from {self.crossover_rows} rows predict was faster: such inputs go to predict"
            )
        else:
            most = max(self.measured) if self.measured else rows
            lines.append(
                f"  {self.method} was faster than predict at every size measured (up to {most} "
                "rows); no crossover"
            )
        if self.method != PREDICT:
            lines.append(
                f"  inputs of more than {self.chunk_rows} rows (the largest size measured) "
                f"run in chunks of {self.chunk_rows}"
            )
        if self.method == JIT:
            lines.append(
                "  jax.jit compiles once per new number of rows: keep the sizes you pass few"
            )
        lines.append("  inputs of another shape or dtype go to predict")
        return "\n".join(lines)


def _concatenate(parts: list[Any]) -> Any:
    """The chunks' outputs as one output, like predict's (arrays, in any nesting)."""
    import numpy as np

    first = parts[0]
    if isinstance(first, dict):
        return {k: _concatenate([p[k] for p in parts]) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_concatenate([p[i] for p in parts]) for i in range(len(first)))
    return np.concatenate(parts)


def _layout(x: Any) -> str | None:
    """``sparse`` or ``ragged`` for inputs the predictor cannot slice as rows, else None."""
    names = {c.__name__ for c in type(x).__mro__}
    module = type(x).__module__ or ""
    if "SparseTensor" in names or module.startswith("scipy.sparse"):
        return "sparse"
    if "RaggedTensor" in names:
        return "ragged"
    return None


def check_example(x: Any) -> tuple[tuple[int | None, ...], str]:
    """``example_x``'s shape and dtype name, for a dense numeric array or tensor of rows.

    Raises:
        InputError: not one array or tensor; sparse or ragged; strings, objects or another
            dtype that is not a number; no rows.
    """
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is None or dtype is None or len(shape) < 1:
        raise InputError("example_x must be one array or tensor (lists and dicts: use predict)")
    layout = _layout(x)
    if layout is not None:
        raise InputError(
            f"example_x is a {layout} tensor: accelerate times dense arrays only; use "
            f"model.predict for {layout} inputs"
        )
    dname = str(getattr(dtype, "name", dtype))
    kind = getattr(dtype, "kind", None)
    if kind is None:  # a TensorFlow dtype
        numeric = any(getattr(dtype, f, False) for f in ("is_floating", "is_integer", "is_bool"))
        kind = "f" if numeric else "O"
    if kind not in "biuf" or dname in ("str", "string", "object"):
        raise InputError(
            f"example_x holds {dname} values: accelerate times numeric inputs only; use "
            "model.predict (a string input goes through the model's own preprocessing)"
        )
    try:
        dims = tuple(None if d is None else int(d) for d in shape)
    except (TypeError, ValueError):
        raise InputError(f"example_x has no fixed shape ({shape})") from None
    if dims[0] == 0 or any(d == 0 for d in dims):
        raise InputError(f"example_x has no rows (shape {dims}): give at least one example")
    if dims[0] is None:
        raise InputError("example_x has no known number of rows: give a concrete array")
    return dims, dname


def _dims(a: Accelerated) -> str:
    return ", ".join("None" if d is None else str(d) for d in a.signature[0][1:])


def accelerate(
    model: Any,
    example_x: Any,
    *,
    batch_size: int = 32,
    warmup: int = 2,
    repeats: int = 7,
    min_block_s: float = 0.01,
    max_rows: int = DEFAULT_MAX_ROWS,
    rtol: float = 1e-3,
    atol: float = 1e-5,
    clock: Clock = time.perf_counter,
) -> Accelerated:
    """A callable running the fastest verified method for ``example_x``'s input signature.

    Args:
        model: a Keras 3 or tf_keras model.
        example_x: one array or tensor, shaped as the inputs you will pass.
        batch_size: ``predict``'s batch size (for the inputs that go to it).
        warmup, repeats, min_block_s: compare's timing settings.
        max_rows: the crossover is looked for up to this many rows.
        rtol, atol: a method's output must match ``predict``'s within these.

    Raises:
        InputError: not a Keras model; ``example_x`` is not a single dense array or tensor
            of numbers with at least one row (sparse, ragged, strings, objects, no rows), or
            not of the model's input shape; ``model.predict`` itself fails on it.
    """
    import numpy as np

    check_model(model)
    dims, dname = check_example(example_x)
    check_data(model, example_x, None)  # the model's input shape, as compare checks it
    fast, graph = _compiled(model, dims, dname)
    x = example_x
    calls = {
        PREDICT: lambda a: model.predict(a, batch_size=batch_size, verbose=0),
        ON_BATCH: lambda a: to_numpy(model.predict_on_batch(a)),
        fast: lambda a: to_numpy(graph(a)),
    }
    timing = {"warmup": warmup, "repeats": repeats, "min_block_s": min_block_s, "clock": clock}
    rejected: dict[str, str] = {}
    with _quiet_retracing(), _kept(model):
        timed = measure([(n, _on(f, x)) for n, f in calls.items()], **timing)  # type: ignore[arg-type]
        failed = next((t.error for t in timed if t.name == PREDICT and t.error), None)
        if failed is not None:
            raise InputError(f"model.predict(example_x) raised: {failed}")
        reference = calls[PREDICT](x)
        measured: dict[int, dict[str, float]] = {num_samples(x): {}}
        for t in timed:
            if t.error is not None:
                rejected[t.name] = f"raised: {t.error}"
                continue
            if t.name != PREDICT:
                mismatch, _ = output_mismatch(
                    calls[t.name](x), reference, rtol=rtol, atol=atol, against="predict"
                )
                if mismatch is not None:
                    rejected[t.name] = mismatch
                    continue
            measured[num_samples(x)][t.name] = median(t.times_s) or 0.0
        ok = measured[num_samples(x)]
        method = min(ok, key=lambda n: ok[n]) if ok else PREDICT
        crossover = None
        k = SCALE
        while method != PREDICT and num_samples(x) * k <= max_rows:
            big = np.concatenate([np.asarray(x)] * k)
            k *= SCALE
            pair = [(PREDICT, _on(calls[PREDICT], big)), (method, _on(calls[method], big))]
            bigger = {**timing, **CROSSOVER_TIMING}
            at = {t.name: median(t.times_s) or 0.0 for t in measure(pair, **bigger)}  # type: ignore[arg-type]
            measured[len(big)] = at
            if at[PREDICT] < at[method]:
                crossover = len(big)
                break
    return Accelerated(
        model=model,
        method=method,
        batch_size=batch_size,
        signature=(dims, dname),
        crossover_rows=crossover,
        measured=measured,
        rejected=rejected,
        graph=graph,
    )


def _compiled(model: Any, dims: tuple[int | None, ...], dname: str) -> tuple[str, Any]:
    """The compiled forward pass of the model's backend, built once: on JAX a ``jax.jit`` of
    ``stateless_call`` (TensorFlow never imported), else a ``tf.function`` whose batch
    dimension is free."""
    if running_backend() == JAX.name and flavour_of(model) == "keras3":
        from tfdiag.measure.methods_jax import jit_forward

        return JIT, jit_forward(model)
    import tensorflow as tf

    spec = tf.TensorSpec((None, *dims[1:]), tf.as_dtype(dname))
    return GRAPH, tf.function(lambda t: model(t, training=False), input_signature=[spec])


def _kept(model: Any) -> AbstractContextManager[None]:
    """On JAX, a predict that raises leaves the model's weights on it (methods_jax)."""
    if running_backend() == JAX.name and flavour_of(model) == "keras3":
        from tfdiag.measure.methods_jax import weights_reattached

        return weights_reattached(model)
    return nullcontext()


def _on(f: Any, x: Any) -> Any:
    def block(number: int) -> None:
        for _ in range(number):
            f(x)

    return block
