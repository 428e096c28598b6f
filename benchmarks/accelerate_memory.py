"""Peak memory of ``tfdiag.accelerate``'s predictor on an input larger than any size it
measured (#20.7), against ``predict`` and against running it as one batch (the old way).

Usage (from the repository root):
    TF_CPP_MIN_LOG_LEVEL=3 python benchmarks/accelerate_memory.py [--rows 20000]

A Dense(256 → 4096 → 1) model; ``accelerate`` measures up to 1,024 rows. Each way runs in its
own process, and prints the growth of the process's peak resident memory over the call (the
input, the model and ``accelerate``'s own measurements are in the baseline), and its time.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

WAYS = ("predict", "accelerate (chunked)", "one batch")


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(way: str, rows: int) -> None:
    import keras
    import numpy as np

    import tfdiag
    from tfdiag.measure.subject import to_numpy

    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((256,)), keras.layers.Dense(4096, activation="relu"), keras.layers.Dense(1)]
    )
    x = np.random.default_rng(0).standard_normal((rows, 256)).astype("float32")
    fast = tfdiag.accelerate(model, x[:256], repeats=3, warmup=1, max_rows=1024)
    fast.crossover_rows = None  # this measures the chosen method, not the crossover
    run = {
        "predict": lambda: model.predict(x, batch_size=32, verbose=0),
        "accelerate (chunked)": lambda: fast(x),
        "one batch": lambda: to_numpy(fast.graph(x)),
    }[way]
    before = _peak_mib()
    start = time.perf_counter()
    out = run()
    took = time.perf_counter() - start
    print(json.dumps({"grew_mib": _peak_mib() - before, "s": took, "method": fast.method,
                      "chunk": fast.chunk_rows, "shape": list(np.shape(out))}))  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=20_000)
    p.add_argument("--child", choices=WAYS)
    args = p.parse_args()
    if args.child:
        child(args.child, args.rows)
        return
    print(f"{args.rows:,} rows × 256 through Dense(4096) → Dense(1)")
    print(f"{'way':<22} {'peak RSS growth':>16} {'time':>8}  method, chunk")
    for way in WAYS:
        proc = subprocess.run(
            [sys.executable, __file__, "--rows", str(args.rows), "--child", way],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{way:<22} {r['grew_mib']:>12.0f} MiB {r['s']:>7.2f}s  {r['method']}, {r['chunk']}")


if __name__ == "__main__":
    main()
