"""Seed 003's model on Keras 3 on JAX: the per-call cost of each way of running it, and what
tfdiag says about ``predict`` (docs/jax.md quotes the figures).

Usage (from the repository root; Keras picks its backend at import):
    KERAS_BACKEND=jax python benchmarks/jax_methods.py [--rounds 2] [--calls 50]

Each round times ``calls`` calls of each method back to back, in the same order; the
median of the rounds is printed beside each round's figure. Then ``tfdiag.profile`` of
``model.predict`` prints its first finding and whether TensorFlow was loaded.

``--training`` (issue 22 item 3): ``tfdiag.compare`` of the same model compiled with Adam/MSE
on 256 rows (8 batches of 32) times the training methods, each on its own copy (``fit``,
``fit`` per batch, ``train_on_batch``, a jitted train step); ``tfdiag.accelerate`` on a 32-row
batch prints its choice; ``profile(model.fit, 32 rows, verify=True)`` (``fit`` called per
small batch) prints each fix it measured with its speed-up. Then it checks the model is
untouched (weights, ``optimizer.iterations``) and TensorFlow not loaded.

``--tfdata``: the corpus case ``jax-tfdata-py-function`` (a JAX model fed by a tf.data
pipeline mapping ``tf.py_function`` per sample; the program loads TensorFlow itself):
``profile(model.fit, ds, verify=True)`` prints the dataset rewrites it measured on clones.
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
    parser.add_argument("--training", action="store_true", help="compare/accelerate/verify")
    parser.add_argument("--tfdata", action="store_true", help="verify a tf.data-fed JAX fit")
    args = parser.parse_args()
    if os.environ.get("KERAS_BACKEND") != "jax":
        print("run with KERAS_BACKEND=jax", file=sys.stderr)
        return 2
    import numpy as np

    import tfdiag
    from tfdiag.measure.seed_models import tiny_model

    model = tiny_model()
    x = np.random.rand(32, 4).astype("float32")
    if args.training:
        return _training(model, x)
    if args.tfdata:
        return _tfdata()
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


def _training(model: Any, x: Any) -> int:
    import jax
    import keras
    import numpy as np

    import tfdiag

    model.compile("adam", "mse")
    rng = np.random.default_rng(0)
    xs, ys = rng.random((256, 4), dtype="float32"), rng.random((256, 1), dtype="float32")
    weights = [w.copy() for w in model.get_weights()]
    print(f"seed 003 on Keras {keras.__version__} / jax {jax.__version__}")
    result = tfdiag.compare(model, xs, ys, repeats=7, progress=False)
    by_kind: dict[str, Any] = {}
    for m in result.methods:
        by_kind.setdefault(m.kind, []).append(m)
    for kind, rows in by_kind.items():
        base = next((r.median_s for r in rows if r.method in ("predict", "fit")), None)
        print(f"compare, {kind} (one pass over 256 rows, batch 32, median of 7 blocks):")
        for r in rows:
            t = r.median_s
            ratio = f"{base / t:6.2f}x vs {rows[0].method if kind == 'inference' else 'fit'}"
            ok = r.error or r.mismatch or "ok"
            print(f"  {r.method:20s} {t * 1e3 if t else float('nan'):8.3f} ms  {ratio}  {ok}")
    fast = tfdiag.accelerate(model, x, repeats=7)
    print(fast.explain())
    same = all(np.array_equal(a, b) for a, b in zip(weights, model.get_weights()))
    print(f"weights untouched by compare and accelerate: {same}")
    print(f"optimizer built by them: {model.optimizer.built}")
    step_x, step_y = xs[:32], ys[:32]
    report = tfdiag.profile(
        model.fit, step_x, step_y, epochs=1, verbose=0, iterations=6, verify=True
    )
    for f in report.findings:
        v = f.verification
        if v is None or not v.variants:
            continue
        base = (v.baseline_median_s or 0.0) * 1e3
        print(f"verify {f.id} on fit(32 rows, epochs=1): as written {base:.2f} ms")
        for run in v.variants:
            sp = v.speedup(run)
            print(
                f"  {run.name:26s} {'passed' if run.passed else 'FAILED':6s} "
                f"{sp if sp else float('nan'):6.2f}x  {run.problem or ''}"
            )
    print(f"TensorFlow loaded: {'tensorflow' in sys.modules}")
    return 0


def _tfdata() -> int:
    import tfdiag
    from corpus.cases_jax import jax_tfdata_py_function as case

    s = case.setup()
    report = tfdiag.profile(
        s.model.fit, s.slow_ds, epochs=1, verbose=0, iterations=3, verify=True, verify_s=120
    )
    print(f"findings: {[f.id for f in report.findings]}")
    for f in report.findings:
        v = f.verification
        if v is None or not v.variants:
            continue
        base = (v.baseline_median_s or 0.0) * 1e3
        print(f"verify {f.id} ({v.status}): as written {base:.1f} ms per fit")
        for run in v.variants:
            sp = v.speedup(run)
            print(
                f"  {run.name:26s} {'passed' if run.passed else 'FAILED':6s} "
                f"{sp if sp else float('nan'):6.2f}x  {run.problem or ''}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
