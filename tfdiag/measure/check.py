"""Is a method's result the same as the baseline's? Plain NumPy, no TensorFlow.

Inference methods are checked output against output (``np.allclose`` semantics; outputs
that hold no finite value at all never agree: NaN equal to NaN shows nothing);
training methods by their loss on the same data before and after they ran
(finite, and not risen beyond ``loss_rise``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tfdiag.records.units import fmt_pct0


def flatten(value: Any) -> list[Any]:
    """Leaves of nested lists/tuples/dicts (dicts in key order), as NumPy arrays."""
    if isinstance(value, Mapping):
        return [leaf for key in sorted(value, key=str) for leaf in flatten(value[key])]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in flatten(item)]
    import numpy as np  # here, not at import: `import tfdiag` stays light

    numpy = getattr(value, "numpy", None)
    return [np.asarray(numpy() if callable(numpy) else value)]


def output_mismatch(
    output: Any, reference: Any, *, rtol: float, atol: float, against: str
) -> tuple[str | None, float | None]:
    """``(message, max |difference|)``; the message is ``None`` when the outputs agree."""
    import numpy as np

    outs, refs = flatten(output), flatten(reference)
    if len(outs) != len(refs):
        return f"returns {len(outs)} outputs, {against} returns {len(refs)}", None
    worst = 0.0
    values = finite_values = 0
    for out, ref in zip(outs, refs):
        if out.shape != ref.shape:
            return f"output shape {out.shape} differs from {against}'s {ref.shape}", None
        if out.size == 0:
            continue
        a, b = out.astype("float64"), ref.astype("float64")
        if not np.array_equal(np.isfinite(a), np.isfinite(b)):
            return f"non-finite outputs where {against}'s are finite (or the reverse)", None
        finite = np.isfinite(b)
        values, finite_values = values + finite.size, finite_values + int(finite.sum())
        diff = np.abs(a[finite] - b[finite])
        worst = max(worst, float(diff.max()) if diff.size else 0.0)
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            message = f"outputs differ from {against}: max |Δ| {worst:.3g}"
            return f"{message} (rtol {rtol:g}, atol {atol:g})", worst
    if values and not finite_values:  # NaN where NaN is, and nothing else: nothing compared
        return (
            f"every output value is NaN or infinite, here as in {against}: nothing shows "
            "the outputs agree (check the model or the example)"
        ), None
    return None, worst


def loss_problem(before: float | None, after: float | None, *, loss_rise: float) -> str | None:
    """Why a training method's loss is suspect, or ``None`` when it looks sane."""
    if before is None or after is None:
        return "no loss to check (evaluate() returned none)"
    if not math.isfinite(after):
        return f"loss became {after} (it was {before:.4g})"
    if math.isfinite(before) and after - before > loss_rise * abs(before) + 1e-6:
        return f"loss rose from {before:.4g} to {after:.4g} (more than {fmt_pct0(loss_rise)})"
    return None
