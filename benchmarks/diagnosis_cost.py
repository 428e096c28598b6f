"""What the default diagnosis costs: ``tfdiag.profile(fn, iterations=N)`` against N calls
with nothing attached.

Usage (from the repository root):
    TF_CPP_MIN_LOG_LEVEL=3 python benchmarks/diagnosis_cost.py [--rounds 5] [--iterations 20]

The default run is a cold call, then ``P = max(3, ⌈N/4⌉)`` iterations under cProfile, then
the N iterations timed with no Python profiler, the first ``min(5, ⌈N/2⌉)`` of them
under the TF profiler, whose trace is written between two iterations and read with xprof
after the last. Each round times N plain calls and one default ``profile()`` back to back,
alternating which goes first; the table shows the medians over the rounds of:

- ``profile()/N plain``: the whole call, findings computed, over the N plain calls;
- ``without the cold call``: the same less the cold call (a first call the program pays
  anyway: it builds and traces what every later call reuses).

The target (issue #10): at most 2 × N unprofiled iterations.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

TARGET = 2.0


def workloads() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]:
    import numpy as np

    from tfdiag.measure.seed_models import BATCH_SHAPE, batch_shape, build_model, tiny_model

    rng = np.random.default_rng(0)
    small = batch_shape("small")
    x = rng.standard_normal(small).astype("float32")
    y = rng.integers(0, 2, (small[0], 1)).astype("float32")
    conv = build_model("small", small)
    tiny = tiny_model()
    xt = rng.standard_normal(BATCH_SHAPE).astype("float32")
    return {
        "predict, seed-003 Dense 4→2→1, 32×4": (tiny.predict, (xt,), {"verbose": 0}),
        "train_on_batch, seed-001 small Conv1D, 32×140×30": (conv.train_on_batch, (x, y), {}),
    }


def _plain(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args, **kwargs)
    return time.perf_counter() - t0


def measure(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], n: int, rounds: int
) -> dict[str, Any]:
    import tfdiag

    for _ in range(3):
        fn(*args, **kwargs)  # warm: what the program has already built
    totals, without_cold, plains, ids = [], [], [], []
    for r in range(rounds):
        order = ("plain", "profile") if r % 2 == 0 else ("profile", "plain")
        for what in order:
            if what == "plain":
                plains.append(_plain(fn, args, kwargs, n))
                continue
            t0 = time.perf_counter()
            report = tfdiag.profile(fn, *args, iterations=n, **kwargs)
            found = report.findings  # the analysis is part of the diagnosis
            total = time.perf_counter() - t0
            totals.append(total)
            without_cold.append(total - (report.timing.first_call_s or 0.0))
            ids.append(found[0].id if found else "-")
    plain = statistics.median(plains)
    return {
        "plain_s": plain,
        "total": statistics.median(t / p for t, p in zip(totals, plains)),
        "without_cold": statistics.median(t / p for t, p in zip(without_cold, plains)),
        "spread": (
            min(t / p for t, p in zip(totals, plains)),
            max(t / p for t, p in zip(totals, plains)),
        ),
        "first": max(set(ids), key=ids.count),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    n = args.iterations
    print(f"N={n}, rounds={args.rounds}, cpus={os.cpu_count()}; target ≤ {TARGET:.1f}× N plain")
    print(
        f"  {'workload':50} {'N plain':>9} {'profile()/N plain':>18} {'without cold':>13}"
        "  first finding"
    )
    for label, (fn, fargs, fkwargs) in workloads().items():
        m = measure(fn, fargs, fkwargs, n, args.rounds)
        lo, hi = m["spread"]
        ok = "ok" if m["without_cold"] <= TARGET else "MISSED"
        print(
            f"  {label:50} {m['plain_s']:8.2f}s {m['total']:9.2f}× ({lo:.2f}–{hi:.2f}) "
            f"{m['without_cold']:11.2f}× {ok}  {m['first']}"
        )


if __name__ == "__main__":
    main()
