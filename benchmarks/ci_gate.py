"""How far the ``tfdiag diff --fail-if-slower`` gate can be trusted on a loaded runner: its
false-alarm rate on an unchanged call and how often it catches a real slowdown.

Usage (from the repository root):
    TF_CPP_MIN_LOG_LEVEL=3 python benchmarks/ci_gate.py [--tries 20] [--burners 2]

Starts ``--burners`` CPU-bound processes (``yes > /dev/null``, as a shared CI runner's
neighbours), then ``--tries`` times profiles a ``tf.function`` of 6 matmuls (BEFORE) and
either the same function again (unchanged) or one of 10 matmuls (the slowdown: 1.5× the
time unloaded, measured and printed first), each with ``tfdiag.profile(...,
tf_profiler=False)`` as ``tfdiag_check`` does, back to back in one process (a notebook's
before/after, the worst case of issue 35), and asks the gate
``tfdiag.diff(before, after).slower_than(--factor)`` —
what ``tfdiag diff --fail-if-slower`` exits 1 on — on the saved reports alone, and with
``rerun=(before_fn, after_fn)`` (the interleaved re-measurement unless the saved runs show
AFTER faster). The burners are killed at the end, however
the script ends. Prints the two rates and the ratios seen.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def steps() -> tuple[Callable[[], Any], Callable[[], Any]]:
    import tensorflow as tf

    x = tf.random.stateless_normal((192, 192), seed=(0, 1))

    def chain(n: int) -> Callable[[], Any]:
        @tf.function
        def step() -> Any:
            y = x
            for _ in range(n):
                y = tf.tanh(y @ x)
            return y

        return step

    return chain(6), chain(10)  # 1.5× the time unloaded (a call's dispatch ≈ one matmul)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--factor", type=float, default=1.2)
    parser.add_argument("--iterations", type=int, default=10)
    args = parser.parse_args()

    import timeit

    import tfdiag

    base, slowed = steps()
    base(), slowed()
    unloaded = min(timeit.repeat(slowed, number=50, repeat=5)) / min(
        timeit.repeat(base, number=50, repeat=5)
    )
    burners = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(args.burners)]
    try:

        def profile(fn: Callable[[], Any]) -> Any:
            return tfdiag.profile(fn, iterations=args.iterations, tf_profiler=False, progress=False)

        counts = {k: 0 for k in ("saved-same", "saved-slow", "rerun-same", "rerun-slow")}
        ratios: dict[str, list[float]] = {k: [] for k in counts}
        for _ in range(args.tries):
            for kind, fn in (("same", base), ("slow", slowed)):
                before, after = profile(base), profile(fn)
                for how, rerun in (("saved", None), ("rerun", (base, fn))):
                    d = tfdiag.diff(before, after, rerun=rerun)
                    counts[f"{how}-{kind}"] += d.slower_than(args.factor)
                    ratios[f"{how}-{kind}"].append(d.ratio)
    finally:
        for p in burners:
            p.kill()
            p.wait()

    def span(values: list[float]) -> str:
        return f"median {statistics.median(values):.2f}×, {min(values):.2f}–{max(values):.2f}×"

    print(
        f"gate --fail-if-slower {args.factor:g}, {args.tries} tries, {args.burners} burners "
        f"on {os.cpu_count()} CPUs, {args.iterations} iterations per report; the slowdown "
        f"is {unloaded:.2f}× unloaded"
    )
    for how, what in (("saved", "saved reports alone"), ("rerun", "with rerun= (interleaved)")):
        print(
            f"{what}: unchanged call, false 'slower' in {counts[how + '-same']} of "
            f"{args.tries} (ratio {span(ratios[how + '-same'])}); the slowdown, caught in "
            f"{counts[how + '-slow']} of {args.tries} (ratio {span(ratios[how + '-slow'])})"
        )


if __name__ == "__main__":
    main()
