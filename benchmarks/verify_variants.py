"""Every mechanical fix of ``profile(..., verify=True)`` on a tiny model: what it measured and
how it was checked (the figures in docs/verify.md).

Usage (from the repository root):
    TF_CPP_MIN_LOG_LEVEL=3 python benchmarks/verify_variants.py [--flavour keras3|tf_keras]

Each row is one finding verified on one call, with verification's default settings (two
warm-up calls, seven interleaved blocks of at least 20 ms, two loss stretches): the call as
written, each variant tried, its speed-up (the call's median over the variant's), its check.
The findings are given by id, so every variant runs whether or not the detector would fire
on this tiny case.
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--flavour", choices=("keras3", "tf_keras"), default="keras3")
    flavour = p.parse_args().flavour

    import numpy as np
    import tensorflow as tf

    from tfdiag.advise import Finding
    from tfdiag.capture.facts import call_facts
    from tfdiag.measure.seed_models import tiny_model
    from tfdiag.measure.verify.call import Call
    from tfdiag.measure.verify.run import verify_findings

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype("float32")
    y = rng.integers(0, 2, (32, 1)).astype("float32")
    x64 = rng.standard_normal((64, 4))
    xs = rng.standard_normal((64, 4)).astype("float32")
    ys = rng.integers(0, 2, (64, 1)).astype("float32")

    def slow(a: Any) -> Any:
        time.sleep(0.001)  # 1 ms of Python per element
        return a

    def load(a: Any, b: Any) -> Any:
        return tf.ensure_shape(tf.numpy_function(slow, [a], tf.float32), [4]), b

    ds = tf.data.Dataset.from_tensor_slices((x, y)).map(load).batch(8)
    model = tiny_model(flavour)
    eager = tiny_model(flavour)
    eager.compile("adam", "binary_crossentropy", run_eagerly=True)
    cases: list[tuple[str, Any, tuple[Any, ...], dict[str, Any]]] = [
        ("per-call-input-pipeline", model.predict, (x,), {"verbose": 0}),
        ("per-call-input-pipeline", model.fit, (x, y), {"epochs": 1, "verbose": 0}),
        ("per-call-input-pipeline", model.train_on_batch, (x, y), {}),
        ("eager-execution", eager.fit, (xs, ys), {"batch_size": 8, "verbose": 0}),
        ("eager-execution", model, (x,), {}),
        ("input-bound", model.fit, (ds,), {"verbose": 0}),
        ("per-step-overhead", model.fit, (xs, ys), {"batch_size": 2, "verbose": 0}),
        (
            "per-step-overhead",
            model.predict,
            (np.tile(x, (16, 1)),),
            {"batch_size": 4, "verbose": 0},
        ),
        ("conversion-overhead", model.predict, (x64,), {"verbose": 0}),
    ]
    print(f"flavour {flavour}; TensorFlow {tf.__version__}")
    print("| finding | call as written | median | variant | median | speed-up | check |")
    print("|---|---|---|---|---|---|---|")
    for fid, fn, args, kwargs in cases:
        call = Call(fn, args, kwargs, facts=dict(call_facts(fn, args, kwargs)))
        (v,) = verify_findings(call, [Finding(fid, fid, "high", 0.5, (), "")])
        for r in v.variants:
            ratio = v.speedup(r)
            shown = f"×{ratio:.2f}" if ratio else "–"
            check = "passed" if r.ok else f"**{r.problem}**"
            role = " (bound)" if r.role == "bound" else ""
            print(
                f"| {fid} [{v.status}] | `{v.baseline}` | {_ms(v.baseline_median_s)} | "
                f"{r.name}{role} | {_ms(r.median_s)} | {shown} | {check} |"
            )
        if not v.variants:
            print(f"| {fid} [{v.status}] | | | {v.reason} | | | |")


def _ms(s: float | None) -> str:
    return "–" if s is None else f"{s * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
