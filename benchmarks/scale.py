"""Load and scale figures: many iterations, many functions, a huge .prof.

    python benchmarks/scale.py            # the full sizes (docs/hardening.md quotes them)
    python benchmarks/scale.py --small    # a quick run

Prints, for each case: wall time, the saved report's size, and peak Python memory
(tracemalloc) of the analysis. No TensorFlow needed.
"""

from __future__ import annotations

import argparse
import io
import marshal
import random
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from types import FunctionType
from typing import Any

from rich.console import Console

import tfdiag
from tfdiag.render.console import render_report


def _cheap() -> int:
    return 1 + 1


def _many_functions(n: int) -> list[FunctionType]:
    """``n`` distinct functions, each with its own code object, file and line."""
    namespace: dict[str, Any] = {}
    source = "\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(n))
    exec(compile(source, "<generated workload>", "exec"), namespace)
    return [namespace[f"f{i}"] for i in range(n)]


def _big_prof(n: int, path: Path) -> None:
    rng = random.Random(0)
    files = [f"/v/lib/python3.11/site-packages/pkg{i % 50}/mod{i}.py" for i in range(n // 20)]
    keys = [(rng.choice(files), i, f"f{i}") for i in range(n)]
    raw = {}
    for i, key in enumerate(keys):
        callers = {keys[rng.randrange(i)]: (3, 3, 0.001, 0.002) for _ in range(2)} if i else {}
        raw[key] = (6, 6, 0.002, 0.004, callers)
    path.write_bytes(marshal.dumps(raw))


def _render(report: tfdiag.Report) -> None:
    Console(file=io.StringIO(), width=100, color_system=None).print(render_report(report))


def _measure(label: str, make: Any, folder: Path, rows: list[tuple[str, ...]]) -> None:
    tracemalloc.start()
    t0 = time.perf_counter()
    report = make()
    _render(report)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    size = "–"
    if report.source == "profile":
        json_path, prof_path = report.save(folder / label.replace(" ", "_"))
        mib = [p.stat().st_size / 2**20 for p in (json_path, prof_path)]
        size = f"{mib[0]:.2f} MiB + {mib[1]:.2f} MiB"
    rows.append(
        (
            label,
            f"{len(report.profile.functions):,}",
            f"{elapsed:.2f} s",
            size,
            f"{peak / 2**20:.0f} MiB",
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a quick run at small sizes")
    args = parser.parse_args()
    iterations = 100 if args.small else 1000
    functions = 200 if args.small else 2000
    prof_size = 10_000 if args.small else 100_000
    rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _measure(
            f"{iterations} iterations of a cheap call",
            lambda: tfdiag.profile(_cheap, iterations=iterations),
            folder,
            rows,
        )
        fns = _many_functions(functions)

        def workload() -> None:
            for f in fns:
                f(1)

        _measure(
            f"{functions} distinct functions × 20 iterations",
            lambda: tfdiag.profile(workload, iterations=20),
            folder,
            rows,
        )
        prof = folder / "big.prof"
        _big_prof(prof_size, prof)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            _render(tfdiag.load_report(prof, iterations=5))
            times.append(time.perf_counter() - t0)
        _measure(
            f"explain a {prof_size:,}-function .prof",
            lambda: tfdiag.load_report(prof, iterations=5),
            folder,
            rows,
        )
        rows[-1] = (
            rows[-1][:2] + (f"{statistics.median(times):.2f} s (median of 3)",) + rows[-1][3:]
        )
    width = [max(len(r[i]) for r in rows + [_HEAD]) for i in range(len(_HEAD))]
    for row in [_HEAD, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, width)))
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS: {maxrss:.0f} MiB · Python {sys.version.split()[0]}")


_HEAD = ("case", "functions", "profile + analyse + render", "saved report", "peak Python memory")

if __name__ == "__main__":
    main()
