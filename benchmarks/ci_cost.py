"""What ``tfdiag_check`` costs a test: the pytest plugin's check (``check_call``, what the
fixture runs: profile with cheap defaults, save the report, judge the findings) against the
bare call it guards.

Usage (from the repository root):
    TF_CPP_MIN_LOG_LEVEL=3 python benchmarks/ci_cost.py [--rounds 5]

Workloads: the seed-003 tiny model (Dense 4→2→1, a 32×4 batch) through
``model.predict_on_batch`` and through a custom ``tf.function`` train step
(``tf.GradientTape`` + ``apply_gradients``) — the two paths docs/ci.md guards. Each round
runs one bare call and one ``check_call`` per setting, alternating the order; the table
shows the medians over the rounds. A test pays the check's whole wall time (its first call
included: a test suite builds its model and traces its step in the check's cold call).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def workloads() -> dict[str, Callable[[], Any]]:
    import numpy as np
    import tensorflow as tf

    from tfdiag.measure.seed_models import BATCH_SHAPE, keras_module, tiny_model

    keras = keras_module("keras3")

    rng = np.random.default_rng(0)
    x = rng.standard_normal(BATCH_SHAPE).astype("float32")
    y = rng.integers(0, 2, (BATCH_SHAPE[0], 1)).astype("float32")
    model = tiny_model()
    model.predict_on_batch(x)
    trained = tiny_model(compiled=False)
    optimizer = keras.optimizers.Adam()
    loss_fn = keras.losses.BinaryCrossentropy()
    xt, yt = tf.constant(x), tf.constant(y)

    @tf.function
    def train_step(xb: Any, yb: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, trained(xb, training=True))
        grads = tape.gradient(loss, trained.trainable_variables)
        optimizer.apply_gradients(zip(grads, trained.trainable_variables))
        return loss

    train_step(xt, yt)
    return {
        "predict_on_batch, Dense 4→2→1, 32×4": lambda: model.predict_on_batch(x),
        "tf.function train step, Dense 4→2→1, 32×4": lambda: train_step(xt, yt),
    }


SETTINGS: dict[str, dict[str, Any]] = {
    "tfdiag_check() (10 iterations)": {},
    "tfdiag_check(iterations=5)": {"iterations": 5},
    "tfdiag_check(tf_profiler=True)": {"tf_profiler": True},
    "the same check, report not saved": {"save": None},
}


def _time(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds

    from tfdiag.capture.guard import check_call

    folder = Path(tempfile.mkdtemp(prefix="tfdiag-ci-cost-"))
    loads = workloads()
    first = _time(lambda: check_call(next(iter(loads.values())), forbid=[], save=folder / "r"))
    print(f"the first tfdiag_check of a process (imports included): {first:.2f} s")
    for name, fn in loads.items():
        bare: list[float] = []
        checked: dict[str, list[float]] = {s: [] for s in SETTINGS}
        for r in range(rounds):
            order = list(SETTINGS) if r % 2 else list(reversed(SETTINGS))
            bare.append(_time(fn))
            for setting in order:
                kwargs = {"save": folder / "r", **SETTINGS[setting]}
                checked[setting].append(
                    _time(lambda f=fn, k=kwargs: check_call(f, forbid=[], **k))  # type: ignore[misc]
                )
            bare.append(_time(fn))
        bare_s = statistics.median(bare)
        print(f"\n{name}: bare call {bare_s * 1e3:.2f} ms (median of {len(bare)})")
        print(f"  {'setting':<34} {'per test':>10} {'× bare call':>12}")
        for setting, times in checked.items():
            t = statistics.median(times)
            print(f"  {setting:<34} {t:>8.2f} s {t / bare_s:>11.0f}×")
    print(f"\n{os.cpu_count()} CPUs; rounds: {rounds}; reports saved under {folder}")


if __name__ == "__main__":
    main()
