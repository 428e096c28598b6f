"""What the workflow tools cost when they are *not* profiling.

1. `tfdiag run`: the per-call cost of an instrumented method (stack walk and bookkeeping),
   alone on a no-op method, then on the cheapest Keras call there is, `predict_on_batch` of
   the seed-003 model.
2. `ProfileCallback`: a whole `fit` epoch with the callback attached (timing every batch,
   profiling none) against the same `fit` without it.
3. `ProfileCallback`'s profiled batches: cProfile's slowdown, as its report measures it.

Passes are interleaved (A B A B ...) so a drifting machine favours neither; medians.

    TF_CPP_MIN_LOG_LEVEL=3 python benchmarks/workflow_overhead.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np

from tfdiag.keras import ProfileCallback
from tfdiag.measure.seed_models import tiny_model
from tfdiag.script.instrument import instrumented, model_classes
from tfdiag.script.recorder import Recorder


def per_call_s(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


class NoopModel:
    def predict_on_batch(self, x: object) -> None:
        return None


def instrumentation_cost(rounds: int, calls: int) -> None:
    """The wrapper alone, on a method that does nothing: the cost per call, isolated."""
    model = NoopModel()
    recorder = Recorder(Path(__file__), iterations=0)
    plain: list[float] = []
    patched: list[float] = []
    for i in range(rounds):
        for kind in ("plain", "patched") if i % 2 else ("patched", "plain"):
            if kind == "plain":
                plain.append(per_call_s(lambda: model.predict_on_batch(None), calls))
            else:
                with instrumented([NoopModel], recorder):
                    patched.append(per_call_s(lambda: model.predict_on_batch(None), calls))
    a, b = statistics.median(plain), statistics.median(patched)
    print(
        f"run: instrumentation alone {(b - a) * 1e6:.1f} µs per call "
        f"(a no-op method: {a * 1e6:.2f} µs plain, {b * 1e6:.2f} µs instrumented; "
        f"medians of {rounds} × {calls} calls)"
    )


def run_overhead(rounds: int, calls: int) -> None:
    model = tiny_model("keras3")
    x = np.zeros((32, 4), "float32")
    model.predict_on_batch(x)
    recorder = Recorder(Path(__file__), iterations=0)
    classes = model_classes()
    plain: list[float] = []
    patched: list[float] = []
    for i in range(rounds):
        for kind in ("plain", "patched") if i % 2 else ("patched", "plain"):  # ABBA order
            if kind == "plain":
                plain.append(per_call_s(lambda: model.predict_on_batch(x), calls))
            else:
                with instrumented(classes, recorder):
                    patched.append(per_call_s(lambda: model.predict_on_batch(x), calls))
    a, b = statistics.median(plain), statistics.median(patched)
    print(
        f"run: predict_on_batch {a * 1e6:.0f} µs plain vs {b * 1e6:.0f} µs instrumented "
        f"(×{b / a:.3f}, {(b - a) * 1e6:+.1f} µs per call; medians of {rounds} × {calls} calls)"
    )


def callback_overhead(rounds: int, steps: int) -> None:
    model = tiny_model("keras3")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32 * steps, 4)).astype("float32")
    y = (x[:, :1] > 0).astype("float32")
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)  # build and trace once
    plain, timed = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the range is never reached
        for _ in range(rounds):
            t0 = time.perf_counter()
            model.fit(x, y, batch_size=32, epochs=1, verbose=0)
            plain.append(time.perf_counter() - t0)
            cb = ProfileCallback(batches=(10 * steps, 10 * steps + 1))
            t0 = time.perf_counter()
            model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[cb])
            timed.append(time.perf_counter() - t0)
    a, b = statistics.median(plain), statistics.median(timed)
    print(
        f"callback: fit of {steps} batches {a * 1e3:.1f} ms plain vs {b * 1e3:.1f} ms with "
        f"ProfileCallback outside its range (×{b / a:.3f}; medians of {rounds})"
    )
    cb = ProfileCallback(batches=(steps // 4, steps // 4 + 40))
    model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[cb])
    assert cb.report is not None
    slowdown = cb.report.timing.profiler_slowdown
    print(
        f"callback: profiled batches {cb.report.timing.iterations}, cProfile slowdown "
        f"×{slowdown:.2f} (median profiled batch / median unprofiled batch, same fit)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    instrumentation_cost(args.rounds, calls=20_000)
    run_overhead(args.rounds, calls=200)
    callback_overhead(args.rounds, steps=200)


if __name__ == "__main__":
    main()
