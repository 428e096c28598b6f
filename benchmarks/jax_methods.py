"""Seed 003's model on Keras 3 on JAX: the per-call cost of each way of running it, and what
tfdiag says about ``predict`` (docs/jax.md quotes the figures).

Usage (from the repository root; Keras picks its backend at import):
    KERAS_BACKEND=jax python benchmarks/jax_methods.py [--rounds 2] [--calls 50]

Each round times ``calls`` calls of each method back to back, in the same order; the
median of the rounds is printed beside each round's figure. Then ``tfdiag.profile`` of
``model.predict`` prints its first finding and whether TensorFlow was loaded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def _methods(model: Any, x: Any) -> dict[str, Callable[[], Any]]:
    import jax
    import numpy as np

    @jax.jit
    def forward(trainable: Any, non_trainable: Any, batch: Any) -> Any:
        return model.stateless_call(trainable, non_trainable, batch, training=False)[0]

    def jitted() -> Any:  # the state read at each call: predict() donates its buffers
        trainable = [v.value for v in model.trainable_variables]
        non_trainable = [v.value for v in model.non_trainable_variables]
        return np.asarray(forward(trainable, non_trainable, x))

    return {
        "predict": lambda: model.predict(x, verbose=0),
        "predict_on_batch": lambda: model.predict_on_batch(x),
        "model(x)": lambda: np.asarray(model(x, training=False)),
        "jitted stateless_call": jitted,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    if os.environ.get("KERAS_BACKEND") != "jax":
        print("run with KERAS_BACKEND=jax", file=sys.stderr)
        return 2
    import numpy as np

    import tfdiag
    from tfdiag.measure.seed_models import tiny_model

    model = tiny_model()
    x = np.random.rand(32, 4).astype("float32")
    methods = _methods(model, x)
    for call in methods.values():
        call()
        call()
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(args.rounds):
        for name, call in methods.items():
            t0 = time.perf_counter()
            for _ in range(args.calls):
                call()
            times[name].append((time.perf_counter() - t0) / args.calls)
    import jax
    import keras

    print(
        f"seed 003 on Keras {keras.__version__} / jax {jax.__version__}, {args.calls} calls a round"
    )
    for name, ts in times.items():
        rounds = " / ".join(f"{t * 1e3:.3f}" for t in ts)
        print(f"  {name:24s} {statistics.median(ts) * 1e3:8.3f} ms per call (rounds: {rounds})")
    report = tfdiag.profile(model.predict, x, verbose=0, iterations=12)
    first = report.findings[0] if report.findings else None
    print(
        f"tfdiag on predict: {first.id if first else 'no finding'} ({100 * first.impact:.0f} %)"
        if first
        else ""
    )
    print(f"callback-overhead reported: {'callback-overhead' in [f.id for f in report.findings]}")
    print(f"TensorFlow loaded: {'tensorflow' in sys.modules}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
