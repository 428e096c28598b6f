"""Load and scale figures: many iterations, many functions, a huge .prof, and how explain,
findings, import and merge grow with size.

    python benchmarks/scale.py            # the full sizes (docs/hardening.md, docs/performance.md)
    python benchmarks/scale.py --small    # a quick run
    python benchmarks/scale.py --growth   # only the growth table (docs/performance.md)

Prints, for each case: wall time, the saved report's size, and peak Python memory
(tracemalloc) of the analysis; then, measured in child processes and interleaved (each
size's explain, then pstats on the same file, three rounds; medians of CPU time): explain
vs pstats on 10k/100k/300k-function .prof files, findings per 1,000 functions, ``import
tfdiag`` over a bare interpreter, ``tfdiag merge`` of 10/100/1,000 workers and ``explain``
of a ~98 MB report of valid notes, each with its peak RSS and its growth with size.
No TensorFlow needed.
"""

from __future__ import annotations

import argparse
import io
import json
import marshal
import os
import random
import resource
import statistics
import subprocess
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
    Console(file=io.StringIO(), width=100, color_system=None).print(render_report(report.diagnosis))


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


#: Where the children keep their bytecode: tfdiag is measured as installed (compiled once,
#: by a warm-up round), not recompiled from source in every child, which is what
#: PYTHONDONTWRITEBYTECODE (set on the shared development machine) would measure.
_PYCACHE: list[str] = []


def _child(args: list[str]) -> tuple[float, float]:
    """CPU seconds (user + system) and peak RSS (MiB) of one child process; a child that
    prints ``spent <seconds>`` as its last line reports its own CPU figure instead."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    if _PYCACHE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = _PYCACHE[0]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, *args], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        err.seek(0)
        if code != 0:
            raise SystemExit(f"{args[:3]}: exit {code}: {err.read().decode()[-500:]}")
        out.seek(-min(out.tell(), 200), os.SEEK_END)
        tail = out.read().decode(errors="replace").strip().splitlines()
    cpu = usage.ru_utime + usage.ru_stime
    if tail and tail[-1].startswith("spent "):
        cpu = float(tail[-1].split()[1])
    return cpu, usage.ru_maxrss / 1024


ROOT = Path(__file__).resolve().parents[1]
_PSTATS = (
    "import io, pstats, sys; s = pstats.Stats(sys.argv[1], stream=io.StringIO()); "
    "s.sort_stats('cumulative').print_stats()"
)


def _growth(small: list[float], big: list[float], ratio: float) -> str:
    """How a figure grew from the smallest size, against the size's own growth."""
    grew = statistics.median(big) / statistics.median(small)
    return f"×{grew:.1f} for ×{ratio:g} ({grew / ratio:.2f} of linear)"


def _worker_reports(folder: Path, n: int) -> None:
    """``n`` saved worker reports of one MultiWorkerMirroredStrategy job (each carrying the
    whole ``n``-host cluster, as TF_CONFIG does)."""
    from tfdiag.records.distributed import Distribution
    from tfdiag.records.report import CallInfo, Environment, Timing
    from tfdiag.records.stats import FunctionStat, ProfileStats
    from tfdiag.results.report import Report

    hosts = tuple(f"host{i}:2222" for i in range(n))
    for i in range(n):
        step = 0.008 + 0.001 * (i % 7)
        report = Report(
            call=CallInfo(label="step", target="train.step", method="step"),
            environment=Environment(python="3.11"),
            timing=Timing(iterations=20, profiled_calls=21, iteration_s=(step,) * 20),
            profile=ProfileStats((FunctionStat("/home/me/train.py", 1, "step", 21, 21, 0.2, 0.2),)),
            created="2026-12-01T00:00:00+00:00",
            distribution=Distribution(
                strategy="MultiWorkerMirroredStrategy",
                task_type="worker",
                task_index=i,
                cluster=(("worker", hosts),),
                num_replicas=n,
                cycle_s=(step + 0.002,) * 20,
                step_fn_s=(step,) * 20,
            ),
        )
        report.save(folder / f"w{n}-{i}")


def _notes_report(path: Path, megabytes: int) -> None:
    """A valid report whose notes fill ``megabytes`` MB (100-character notes)."""
    from tfdiag.records.report import CallInfo, Environment, Timing
    from tfdiag.records.stats import FunctionStat, ProfileStats
    from tfdiag.results.report import Report

    report = Report(
        call=CallInfo(label="step", target="train.step", method="step"),
        environment=Environment(python="3.11"),
        timing=Timing(iterations=10, profiled_calls=11, iteration_s=(0.01,) * 10),
        profile=ProfileStats((FunctionStat("/home/me/train.py", 1, "step", 11, 11, 0.1, 0.1),)),
        created="2026-12-01T00:00:00+00:00",
    )
    doc = report.to_json()
    doc["notes"] = [f"note {i:07d}: " + "n" * 86 for i in range(megabytes * 10_000 - 300)]
    path.write_text(json.dumps(doc, separators=(",", ":")))


def _sizes(small: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Function-table sizes and worker counts."""
    if small:
        return (2_000, 10_000, 30_000), (10, 30, 100)
    return (10_000, 100_000, 300_000), (10, 100, 1000)


def make_inputs(folder: Path, small: bool) -> None:
    sizes, workers = _sizes(small)
    for n in sizes:
        _big_prof(n, folder / f"big{n}.prof")
    for n in workers:
        _worker_reports(folder, n)
    _notes_report(folder / "notes.tfdiag.json", 10 if small else 98)


def growth(small: bool) -> None:
    """The growth table: every child process interleaved, medians of three rounds."""
    sizes, workers = _sizes(small)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # Made in a child: a parent grown by them would lend its size to every child's
        # peak RSS (fork copies the parent's resident pages into the child's count).
        make = [sys.executable, __file__, "--make-inputs", str(folder)]
        subprocess.run(make + (["--small"] if small else []), check=True)
        _PYCACHE[:] = [str(folder / "pycache")]
        profs = {n: folder / f"big{n}.prof" for n in sizes}
        jobs = {n: sorted(map(str, folder.glob(f"w{n}-*.tfdiag.json"))) for n in workers}
        notes = folder / "notes.tfdiag.json"
        cpu: dict[str, list[float]] = {}
        rss: dict[str, list[float]] = {}

        def run(key: str, args: list[str]) -> None:
            c, r = _child(args)
            cpu.setdefault(key, []).append(c)
            rss.setdefault(key, []).append(r)

        def explain(n: int, fmt: str) -> list[str]:
            return ["-m", "tfdiag", "explain", str(profs[n]), "--iterations", "3", "--format", fmt]

        # The warm-up: every kind of child once, unmeasured, so each has its bytecode.
        small = sizes[0]
        for args in (["-c", "import tfdiag"], explain(small, "json"), explain(small, "text"),
                     ["-c", _PSTATS, str(profs[small])], ["-c", _FINDINGS, str(profs[small])],
                     ["-m", "tfdiag", "merge", *jobs[workers[0]]]):  # fmt: skip
            _child(args)
        for _ in range(3):  # interleaved: each round runs every case once
            for _ in range(3):
                run("bare", ["-c", "pass"])
                run("import", ["-c", "import tfdiag"])
            for n in sizes:
                run(f"explain {n}", explain(n, "json"))
                run(f"pstats {n}", ["-c", _PSTATS, str(profs[n])])
                run(f"text {n}", explain(n, "text"))
                run(f"findings {n}", ["-c", _FINDINGS, str(profs[n])])
            for n in workers:
                run(f"merge {n}", ["-m", "tfdiag", "merge", *jobs[n]])
            for fmt in ("text", "json"):
                run(f"notes {fmt}", ["-m", "tfdiag", "explain", str(notes), "--format", fmt])
        med = {k: statistics.median(v) for k, v in cpu.items()}
        top = {k: max(v) for k, v in rss.items()}
        print("\nCPU seconds (user + system, median of 3 interleaved rounds) · peak RSS")
        print(f"import tfdiag: {1000 * (med['import'] - med['bare']):.0f} ms over a bare "
              f"interpreter ({1000 * med['bare']:.0f} ms)")  # fmt: skip
        for n in sizes:
            e, t, p = med[f"explain {n}"], med[f"text {n}"], med[f"pstats {n}"]
            per = med[f"findings {n}"] / (n / 1000)
            print(f"{n:>7,}-function .prof: explain --format json {e:.2f} s = {e / p:.2f} × "
                  f"pstats ({p:.2f} s), {top[f'explain {n}']:.0f} MiB; the console view "
                  f"{t:.2f} s = {t / p:.2f} ×, {top[f'text {n}']:.0f} MiB; findings "
                  f"{1000 * per:.2f} ms per 1,000 functions")  # fmt: skip
        first, last = sizes[0], sizes[-1]
        grow = last / first
        print(f"growth {first:,} → {last:,}: explain json "
              f"{_growth(cpu[f'explain {first}'], cpu[f'explain {last}'], grow)}, text "
              f"{_growth(cpu[f'text {first}'], cpu[f'text {last}'], grow)}, pstats "
              f"{_growth(cpu[f'pstats {first}'], cpu[f'pstats {last}'], grow)}, findings "
              f"{_growth(cpu[f'findings {first}'], cpu[f'findings {last}'], grow)}")  # fmt: skip
        for n in workers:
            print(f"merge of {n:>5,} workers: {med[f'merge {n}']:.2f} s, "
                  f"{top[f'merge {n}']:.0f} MiB")  # fmt: skip
        few, many = workers[0], workers[-1]
        grew = _growth(cpu[f"merge {few}"], cpu[f"merge {many}"], many / few)
        print(f"growth {few} → {many} workers: merge {grew} (each report carries the whole "
              "cluster: the input grows as workers²)")  # fmt: skip
        size = notes.stat().st_size / 1e6
        for fmt in ("text", "json"):
            print(f"explain of a {size:.0f} MB report of valid notes, --format {fmt}: "
                  f"{med[f'notes {fmt}']:.2f} s, {top[f'notes {fmt}']:.0f} MiB")  # fmt: skip


#: Findings alone, in a child: the record loaded and analysed first, only advise timed, with
#: the cyclic collector paused as ``diagnose`` pauses it (else the figure is whichever full
#: collection of the loaded table happens to fall inside the timed part).
_FINDINGS = (
    "import sys, time\n"
    "from tfdiag.results.load import load_result\n"
    "from tfdiag.analysis.pipeline import analyze\n"
    "from tfdiag.advise import advise\n"
    "from tfdiag.records.stats import no_gc\n"
    "r = load_result(sys.argv[1], iterations=3); a = analyze(r)\n"
    "with no_gc():\n"
    "    t = time.process_time(); advise(r, a); print('spent', time.process_time() - t)\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a quick run at small sizes")
    parser.add_argument("--growth", action="store_true", help="only the growth table")
    parser.add_argument("--make-inputs", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.make_inputs is not None:
        make_inputs(args.make_inputs, args.small)
        return
    if args.growth:
        growth(args.small)
        return
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
    growth(args.small)


_HEAD = ("case", "functions", "profile + analyse + render", "saved report", "peak Python memory")

if __name__ == "__main__":
    main()
