"""Fuzz ``tfdiag explain``: thousands of mutants of real saved results and odd ``.prof`` shapes.

    python benchmarks/fuzz.py                      # 3,000 JSON mutants, 200 .prof shapes,
                                                   # 300 crafted save locks/journals
    python benchmarks/fuzz.py --mutants 300 --prof 40 --journals 100 --seed 2

The seeds are real results saved by this tfdiag: a profile report of a Python workload
(with a sampling probe, a TF-profiler record, graph traces and Python callbacks), a
comparison, a bench grid and a ``tfdiag run`` result; and the ``.prof`` of that report.
Each mutant changes one value anywhere in a document (a type swap, a huge or hostile
string, NaN, deep nesting, a huge or negative number, a deleted key...) or the text itself
(truncated, a byte flipped), and is run through ``tfdiag explain`` (in worker processes,
each call under a time limit and a memory cap) as text and as JSON. Outcomes:

- ok: exit 0; clear error: exit 2 with one ``tfdiag: error:`` line;
- internal error: exit 1; hang: over the time limit; traceback: an exception escaped;
- unsafe output: a control character reached stdout or stderr;
- acted outside: a crafted lock or journal beside a report (``benchmarks/fuzz_journal.py``)
  made ``explain``, or a save over that report, change a file outside the report's set.

Exits 1 if anything but ok and clear error happened (and lists the first of each).
No TensorFlow needed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import marshal
import multiprocessing
import os
import random
import re
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_journal  # noqa: E402

#: Per explain call; the slowest legitimate mutant takes well under a second.
TIME_LIMIT_S = 20
#: Address space per worker.
MEMORY_LIMIT = 3 * 2**30
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
OUTCOMES = (
    "ok", "clear error", "internal error", "hang", "traceback", "unsafe output", "acted outside"
)  # fmt: skip

HOSTILE = [
    "\x1b]0;title\x07\x1b[2J",
    "\x1b]52;c;ZXZpbA==\x07",
    "[link=https://evil.example]x[/link]",
    "[/]",
    "[bold red]unclosed",
    "</script><script>alert(1)</script>",
    "\u202eevil\u202c",
    "é" * 3 + "\u0301" * 50,
    "😀" * 20,
    "\x9b31m",
    "$\\frac{1}{$",
    "{0}{1}%s%d",
    "x" * 70_000,
    "y" * 1_000_000,
    "",
]


# -- the seeds ---------------------------------------------------------------------------


def _workload() -> int:
    return sum(i * i for i in range(2000))


def _seeds(folder: Path) -> dict[str, Path]:
    import tfdiag
    from tfdiag.records.bench import BenchCell
    from tfdiag.records.callbacks import PyCallback
    from tfdiag.records.compare import MethodResult
    from tfdiag.records.probes import OpRow, Probes, TfProfile
    from tfdiag.records.report import Environment
    from tfdiag.records.script import CallSite
    from tfdiag.records.traces import TraceEvent
    from tfdiag.results.bench import BenchResult
    from tfdiag.results.compare import CompareResult
    from tfdiag.results.script import ScriptResult

    report = tfdiag.profile(_workload, iterations=10, sampling=True)
    tf = TfProfile(
        steps=2, iteration_s=(0.01, 0.01), hardware="CPU", host_op_s=0.004, input_op_s=0.001,
        device_op_s=None, h2d_s=None, d2h_s=None,
        top_ops=(OpRow("Host", "MatMul", "dense/MatMul", 4, 0.002, 0.003),), op_rows=1,
        step_ms=(10.0, 10.0), breakdown_ms=(("input", 1.0),), verdict="not input-bound",
        advice=("none",), graph_builds=0, graph_builds_per_step=(0, 0), host_tracer_level=1,
    )  # fmt: skip
    sampling = report.probes.sampling if report.probes else None
    report = replace(
        report,
        probes=Probes(sampling=sampling, tf_profile=tf),
        traces=(TraceEvent(1, "step", "/app/x.py", 3, "step", (("x", "TensorSpec(...)"),)),),
        py_callbacks=(PyCallback("parse", "/app/x.py", 9, "py_function", 10, 0.01, 2),),
        notes=("a note",),
    )
    paths = {"profile": report.save(folder / "profile")[0]}
    paths["prof"] = folder / "profile.prof"
    env = Environment(
        python="3.11", cpu_count=2, versions={"tensorflow": "2.21.0", "keras": "3.15.1"}
    )

    def method(name: str, kind: str, median: float, **kw: Any) -> MethodResult:
        return MethodResult(
            name=name, method=name, call=f"model.{name}(x)", kind=kind, flavour="keras3",
            eager=False, times_s=(median, median * 1.1, median * 0.9), warmup_s=(median * 5,),
            **kw,
        )  # fmt: skip

    compare = CompareResult(
        methods=(
            method("predict", "inference", 0.1),
            method("predict_on_batch", "inference", 0.001, max_abs_diff=0.0),
            method("fit", "training", 0.2, loss_before=1.0, loss_after=0.9),
            method("train_on_batch", "training", 0.01, error="boom"),
        ),
        model="Sequential", data=(("x", "(32, 4) float32"),),
        baselines=(("inference", "predict"), ("training", "fit")), environment=env,
    )  # fmt: skip
    paths["compare"] = compare.save(folder / "compare.tfdiag.json")
    cells = tuple(
        BenchCell("small", "small", "keras3", loop, "numpy", mode, 5, (0.01, 0.011, 0.012))
        for loop in ("fit", "train_on_batch")
        for mode in ("graph", "eager")
    )
    paths["bench"] = BenchResult(cells=cells, environment=env).save(folder / "bench")[0]
    site = CallSite(
        file="/app/train.py", line=12, method="predict", owner="Sequential", code="m.predict(x)",
        calls=11, total_s=0.5, profiled_calls=11, call_s=(0.05,) * 11, report=report,
    )  # fmt: skip
    script = ScriptResult(
        script="train.py", argv=("--epochs", "1"), wall_s=1.0, status="ok", sites=(site,),
        iterations=10, environment=env,
    )  # fmt: skip
    paths["script"] = script.save(folder / "script.tfdiag.json")
    return paths


# -- mutations ---------------------------------------------------------------------------


def _nodes(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _nodes(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:6]):  # the first rows of long tables stand for the rest
            out += _nodes(v, (*path, i))
    return out


def _replacement(rng: random.Random, old: Any) -> Any:
    choice = rng.randrange(14)
    if choice == 0:
        return rng.choice(HOSTILE) + (old if isinstance(old, str) else "")
    if choice == 1:
        return rng.choice([0, -1, 1, 2**31, 2**63, 10**15 + 1, 10**30, -(10**20)])
    if choice == 2:
        return rng.choice([0.0, -0.5, 1e-320, 1e300, 1e308, -1e308, 3.5])
    if choice == 3:
        return rng.choice([True, False, None])
    if choice == 4:
        return "x" * rng.choice([1, 100, 5_000_000])
    if choice == 5:
        return [] if rng.random() < 0.5 else {}
    if choice == 6:
        nested: Any = 0
        for _ in range(rng.choice([10, 100, 900])):
            nested = [nested]
        return nested
    if choice == 7 and isinstance(old, list) and old:
        return old * rng.choice([2, 50, 2000])
    if choice == 8 and isinstance(old, list):
        return [_replacement(rng, x) for x in old[:5]]
    if choice == 9 and isinstance(old, dict):
        return {k: _replacement(rng, v) for k, v in list(old.items())[:5]}
    if choice == 10:
        return {"a": 1} if not isinstance(old, dict) else list(old)
    if choice == 11:
        return str(old)
    if choice == 12:
        return [old]
    return rng.choice(HOSTILE)


def _set(doc: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    if not path:
        return value
    node = doc
    for key in path[:-1]:
        node = node[key]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


def json_mutant(rng: random.Random, base: str) -> bytes:
    """One mutant of a saved result's JSON text."""
    r = rng.random()
    if r < 0.08:  # the text itself
        data = base.encode()
        cut = rng.randrange(len(data))
        if rng.random() < 0.5:
            return data[:cut]
        return data[:cut] + bytes([rng.randrange(256)]) + data[cut + 1 :]
    doc = json.loads(base)
    nodes = _nodes(doc)
    strings = [p for p in nodes if isinstance(_at(doc, p), str)]
    lists = [p for p in nodes if isinstance(_at(doc, p), list)]
    if r < 0.2:  # literals json.dumps will not write: NaN, Infinity, huge, lone surrogate
        numbers = [p for p in nodes if type(_at(doc, p)) in (int, float)]
        marker = "__MUTANT__"
        doc = _set(doc, rng.choice(numbers + strings), marker, delete=False)
        literal = rng.choice(["NaN", "Infinity", "-Infinity", "1e999", '"\\udc80"', "1" * 5000])
        return json.dumps(doc).replace(f'"{marker}"', literal).encode()
    if r < 0.45:  # a hostile string where a string is
        path = rng.choice(strings)
        old = _at(doc, path)
        value = rng.choice([rng.choice(HOSTILE) + old, old + rng.choice(HOSTILE)])
        doc = _set(doc, path, value, delete=False)
    elif r < 0.6:  # a string, a number or an object where a list is
        path = rng.choice(lists)
        value = rng.choice(["x" * rng.choice([10, 5_000_000]), 3, {"a": [1]}, None])
        doc = _set(doc, path, value, delete=False)
    else:
        path = rng.choice(nodes)
        doc = _set(doc, path, _replacement(rng, _at(doc, path)), delete=rng.random() < 0.1)
    return json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _prof_value(rng: random.Random) -> Any:
    return rng.choice(
        [float("inf"), float("nan"), -1, -1.5, 10**30, 2**63, 1e300, "1", None, (), [1], 0, 0.0]
    )


def prof_mutant(rng: random.Random, raw: dict[Any, Any]) -> bytes:
    """One odd pstats shape: a mutated entry, key or caller, or not pstats at all."""
    items = list(raw.items())
    r = rng.randrange(10)
    if r == 0:
        return rng.choice([b"", b"\x00", marshal.dumps([1, 2]), marshal.dumps({}), b"{" * 100])
    if r == 1:
        data = marshal.dumps(raw)
        return data[: rng.randrange(1, len(data))]
    key, value = rng.choice(items)
    out = dict(items)
    if r == 2:  # an odd key
        del out[key]
        odd = rng.choice([(key[0], key[1]), (key[0], "1", key[2]), (1, 2, 3), "f", (key, key)])
        out[odd] = value
    elif r == 3:  # an odd entry
        out[key] = rng.choice([value[:4], (*value, 1), "entry", None, list(value)])
    elif r <= 6:  # one number of an entry
        entry = list(value)
        entry[rng.randrange(4)] = _prof_value(rng)
        out[key] = tuple(entry)
    elif r == 7:  # a caller edge
        callers = dict(value[4])
        ckey = rng.choice(list(raw))
        callers[ckey] = rng.choice(
            [(1, 1, _prof_value(rng), 0.1), (1, 2), "x", 3, (_prof_value(rng), 1, 0.1, 0.1)]
        )
        out[key] = (*value[:4], callers)
    elif r == 8:  # hostile names
        file, line, name = key
        del out[key]
        out[(file + rng.choice(HOSTILE), line, name + rng.choice(HOSTILE))] = value
    else:  # recursion, a caller that is not in the table
        out[key] = (*value[:4], {key: (1, 1, 0.1, 0.1), ("nowhere", 0, "x"): (1, 1, 0.0, 0.0)})
    try:
        return marshal.dumps(out)
    except ValueError:  # marshal cannot write it: a shape no .prof can have
        return marshal.dumps(raw)


# -- running -----------------------------------------------------------------------------


class Hang(BaseException):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise Hang


def _init_worker() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    signal.signal(signal.SIGALRM, _alarm)


def explain(task: tuple[str, str, list[str]]) -> tuple[str, str, str]:
    """``(label, outcome, detail)`` of one ``tfdiag explain`` in this worker (of a crafted
    lock or journal: :func:`fuzz_journal.run`)."""
    label, path, extra = task
    if label.startswith("journal"):
        return (label, *fuzz_journal.run(Path(path), _cli))
    return (label, *_cli(["explain", path, *extra]))


def _cli(argv: list[str]) -> tuple[str, str]:
    from tfdiag.frontends.cli import main

    out, err = io.StringIO(), io.StringIO()
    signal.alarm(TIME_LIMIT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except Hang:
        return "hang", ""
    except BaseException as exc:  # escaping main() is what this looks for
        return "traceback", f"{type(exc).__name__}: {exc}"[:300]
    finally:
        signal.alarm(0)
    text, errors = out.getvalue(), err.getvalue()
    if UNSAFE.search(text + errors):
        return "unsafe output", repr(UNSAFE.findall(text + errors)[:5])
    lines = errors.strip().splitlines()
    if code == 0 and len(lines) <= 1:  # a warning is one line
        return "ok", lines[0][:200] if lines else ""
    if code == 2 and len(lines) == 1 and lines[0].startswith("tfdiag: error:"):
        return "clear error", lines[0][:200]
    return "internal error", errors.strip()[:300]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=3000, help="JSON mutants (default 3000)")
    parser.add_argument("--prof", type=int, default=200, help=".prof shapes (default 200)")
    parser.add_argument(
        "--journals", type=int, default=300, help="crafted save locks/journals (default 300)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "seeds").mkdir()
        seeds = _seeds(folder / "seeds")
        bases = {k: p.read_text() for k, p in seeds.items() if k != "prof"}
        raw = marshal.loads(seeds["prof"].read_bytes())
        tasks = []
        kinds = list(bases)
        for i in range(args.mutants):
            kind = kinds[i % len(kinds)] if i % 2 else "profile"
            path = folder / f"m{i:05d}.tfdiag.json"
            path.write_bytes(json_mutant(rng, bases[kind]))
            fmt = ["--format", "json"] if i % 3 == 0 else ["--width", "100"]
            tasks.append((f"{kind} #{i}", str(path), fmt))
        for i in range(args.prof):
            path = folder / f"p{i:04d}.prof"
            path.write_bytes(prof_mutant(rng, raw))
            fmt = ["--format", "json"] if i % 3 == 0 else []
            tasks.append((f".prof #{i}", str(path), ["--iterations", "1", *fmt]))
        tasks += fuzz_journal.tasks(rng, folder, seeds["profile"], args.journals, HOSTILE)
        os.chdir(folder)  # a journal naming ``.`` or ``..`` acts on the sandbox at worst
        context = multiprocessing.get_context("fork")
        with context.Pool(args.workers, initializer=_init_worker, maxtasksperchild=100) as pool:
            results = pool.map(explain, tasks, chunksize=8)
    elapsed = time.perf_counter() - started
    counts: Counter[tuple[str, str]] = Counter()
    first: dict[str, tuple[str, str]] = {}
    for label, outcome, detail in results:
        counts[(label.split(" ")[0] if label[0] in ".j" else "json", outcome)] += 1
        first.setdefault(outcome, (label, detail))
    print(
        f"tfdiag explain on {args.mutants:,} JSON mutants, {args.prof:,} .prof shapes and "
        f"{args.journals:,} crafted save locks (explain, then a save over the report)"
    )
    print(f"(seed {args.seed}, {args.workers} workers, {elapsed:.0f} s)\n")
    print(f"{'outcome':16} {'JSON':>7} {'.prof':>7} {'lock':>7}")
    for outcome in OUTCOMES:
        row = [counts[kind, outcome] for kind in ("json", ".prof", "journal")]
        print(f"{outcome:16} {row[0]:>7,} {row[1]:>7,} {row[2]:>7,}")
    bad = [o for o in OUTCOMES[2:] if any(counts[k, o] for k in ("json", ".prof", "journal"))]
    for outcome in bad:
        label, detail = first[outcome]
        print(f"\nfirst {outcome}: {label}: {detail}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
