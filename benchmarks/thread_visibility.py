"""Which mechanism sees Python that runs on TensorFlow's own threads, and what it costs.

Usage (from the repository root):
    TF_CPP_MIN_LOG_LEVEL=3 python benchmarks/thread_visibility.py [--rounds 5] [--elements 256]

The workload is the input-bound pipeline users report most: ``Dataset.map`` over a
``tf.py_function`` whose Python takes about a millisecond per element, batched by 8 and
iterated from the main thread. The Python runs on tf.data's threads, which TensorFlow's C++
starts, so no Python-level profiler on the main thread sees it. The function times itself,
which is the ground truth. Each round iterates the pipeline once per mechanism, in a
rotating order:

- ``none``: nothing attached (the baseline of the cost column);
- ``cProfile (main thread)``: what ``tfdiag.profile``'s cProfile pass sees — the time
  inside the user's function, as cProfile records it;
- ``threading.setprofile + cProfile``: a profiler installed for every thread Python's
  ``threading`` starts; tf.data's threads are not among them;
- ``sampling every thread (1 ms)``: ``sys._current_frames()`` read every millisecond from a
  thread, counting the samples that hold the user's function on any thread (the mechanism
  tfdiag dropped from its sampler: on Python 3.11 reading other threads' frames can
  crash, cpython#99110);
- ``TF profiler (host tracer 1)``: the ``EagerPyFunc`` ops' time in tfdiag's trace;
- ``callback hook``: tfdiag's wrapper of TensorFlow's Python-callback registry.

Columns: the share of the true Python time each one attributes to the function, and the
pipeline's median wall time with it over the baseline's.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

TRUTH = {"s": 0.0}


def slow_python(v: Any) -> Any:
    t0 = time.perf_counter()
    end = t0 + 0.001
    while time.perf_counter() < end:  # a millisecond of Python, holding the GIL
        pass
    TRUTH["s"] += time.perf_counter() - t0
    return v


def pipeline(elements: int) -> Any:
    import numpy as np
    import tensorflow as tf

    x = np.zeros((elements, 4), "float32")
    return (
        tf.data.Dataset.from_tensor_slices(x)
        .map(lambda a: tf.py_function(slow_python, [a], tf.float32))
        .batch(8)
    )


WALL = {"s": 0.0}


def iterate(ds: Any) -> None:
    """One pass over the pipeline; its wall time in ``WALL`` (set-up, export, reading left
    out: the cost column is what the probe adds while the program runs)."""
    t0 = time.perf_counter()
    for _ in ds:
        pass
    WALL["s"] = time.perf_counter() - t0


def _cprofile_seen(profiler: cProfile.Profile) -> float:
    stats = pstats.Stats(profiler)
    return sum(
        ct
        for (_, _, name), (_, _, _, ct, _) in stats.stats.items()  # type: ignore[attr-defined]
        if name == "slow_python"
    )


def none(ds: Any) -> float:
    iterate(ds)
    return 0.0


def main_thread_cprofile(ds: Any) -> float:
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        iterate(ds)
    finally:
        profiler.disable()
    return _cprofile_seen(profiler)


def every_threading_thread(ds: Any) -> float:
    profilers: list[cProfile.Profile] = []
    main = cProfile.Profile()

    def install(*_: Any) -> None:  # runs once in each new threading.Thread
        p = cProfile.Profile()
        profilers.append(p)
        p.enable()

    threading.setprofile(install)
    main.enable()
    try:
        iterate(ds)
    finally:
        main.disable()
        threading.setprofile(None)  # type: ignore[arg-type]
    return sum(_cprofile_seen(p) for p in [main, *profilers])


def sampling_every_thread(ds: Any) -> float:
    interval, hits, stop = 0.001, [0], threading.Event()
    target = slow_python.__code__

    def sample() -> None:
        while not stop.is_set():
            frames = sys._current_frames()
            for frame in frames.values():
                f = frame
                while f is not None:
                    if f.f_code is target:
                        hits[0] += 1
                        break
                    f = f.f_back
            del frames
            time.sleep(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        iterate(ds)
    finally:
        stop.set()
        sampler.join()
    elapsed = WALL["s"]
    # each sample stands for the wall time between two samples
    samples = max(elapsed / interval, 1.0)
    return min(hits[0] / samples, 1.0) * elapsed


def tf_profiler(ds: Any) -> float:
    from tfdiag.capture.tfprofiler import TfTrace

    trace = TfTrace.start()
    try:
        with trace.step(0):
            iterate(ds)
    except BaseException:
        trace.abort()
        raise
    export = trace.stop()
    record, _ = trace.read([WALL["s"]], export)
    funcs = record.py_funcs
    return (funcs.pipeline_s + funcs.step_s) if funcs is not None else 0.0


def callback_hook(ds: Any) -> float:
    from tfdiag.capture.pycalls import CallbackRecorder, hooked

    recorder = CallbackRecorder()
    with hooked(recorder):
        iterate(ds)
    return sum(r.seconds for r in recorder.records() if r.function.endswith("slow_python"))


MECHANISMS: dict[str, Callable[[Any], float]] = {
    "none": none,
    "cProfile (main thread)": main_thread_cprofile,
    "threading.setprofile + cProfile": every_threading_thread,
    "sampling every thread (1 ms)": sampling_every_thread,
    "TF profiler (host tracer 1)": tf_profiler,
    "callback hook": callback_hook,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--elements", type=int, default=256)
    args = parser.parse_args()
    ds = pipeline(args.elements)
    iterate(ds)  # warm: trace the map function once
    names = list(MECHANISMS)
    seen: dict[str, list[float]] = {n: [] for n in names}
    walls: dict[str, list[float]] = {n: [] for n in names}
    for r in range(args.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            TRUTH["s"] = 0.0
            found = MECHANISMS[name](ds)
            walls[name].append(WALL["s"])
            seen[name].append(found / TRUTH["s"] if TRUTH["s"] > 0 else 0.0)
    base = statistics.median(walls["none"])
    print(
        f"{args.elements} elements × 1 ms of Python in a py_function map, rounds={args.rounds}, "
        f"cpus={os.cpu_count()}; baseline {base:.2f} s per pass"
    )
    print(f"  {'mechanism':34} {'sees of the Python time':>24} {'wall vs none':>13}")
    for name in names:
        share = statistics.median(seen[name])
        cost = statistics.median(walls[name]) / base
        shown = "-" if name == "none" else f"{100 * share:.1f} %"
        print(f"  {name:34} {shown:>24} {cost:12.2f}×")


if __name__ == "__main__":
    main()
