"""Accuracy of tfdiag on the corpus: does its first finding name the real cause and fix?

    python benchmarks/accuracy.py                       # both backends, one table each
    python benchmarks/accuracy.py --backend tensorflow  # corpus/cases/ only
    python benchmarks/accuracy.py --backend jax         # corpus/cases_jax/ (Keras 3 on JAX)
    python benchmarks/accuracy.py --cases predict-in-loop,fit-batch-size-1
    python benchmarks/accuracy.py --rounds 7 --json rows.json
    python benchmarks/accuracy.py --premise-only        # measure the premises, no tfdiag
    python benchmarks/accuracy.py --show                # also print each report

For every case: ``setup()``, the premise (``slow`` vs ``fast`` interleaved, medians of
``--rounds``), tfdiag on the case as its user would run it, and the verdict. A case that
raises is a row with its error; the run goes on. Keras picks its backend once per process:
the TensorFlow cases share this process (or a child with ``KERAS_BACKEND=tensorflow`` when
this one is set to another backend); each JAX case runs in a child process of its own with
``KERAS_BACKEND=jax`` (``corpus/run_one.py``: whether TensorFlow is loaded is part of a JAX
program, and one case must not load it for the next). By default the TensorFlow table is
printed first, then the JAX one. Columns:

- ``premise×``: measured slow/fast ratio (``!`` after it: below half of ``CASE.premise``,
  or for a ``python_fix=False`` case not below 1.3×);
- ``expect`` / ``tfdiag first``: the finding id the case needs first / the one tfdiag ranks
  first;
- ``cause``: first finding is ``expect``; ``fix``: its fix names one of ``fix_mentions``;
- ``no-gain``: some finding says Python-side changes won't help (wrong unless the case
  is ``python_fix=False``);
- ``known``: ``miss`` for a case whose ``known_miss`` says tfdiag gets it wrong today (it
  counts as the miss it is; tests/test_corpus.py marks it xfail, strictly).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from corpus.harness import CASE_DIRS, Loaded, load_cases  # noqa: E402
from corpus.run_one import case_row, run_in_child  # noqa: E402


def _clear_keras() -> None:
    """Drop the case's graphs between cases (both Keras flavours, when imported)."""
    for name in ("keras", "tf_keras"):
        mod = sys.modules.get(name)
        if mod is None:
            continue
        try:
            mod.backend.clear_session()
        except Exception:  # noqa: BLE001 - best effort between cases
            pass
    gc.collect()


def run_case(loaded: Loaded, *, rounds: int, premise_only: bool, show: bool) -> dict[str, Any]:
    """One case in this process (the TensorFlow corpus shares one process)."""
    try:
        return case_row(loaded, rounds=rounds, premise_only=premise_only, show=show)
    finally:
        _clear_keras()


def _mark(flag: Any) -> str:
    return "-" if flag is None else ("✓" if flag else "✗")


def table(rows: list[dict[str, Any]]) -> str:
    head = ("case", "premise×", "expect", "tfdiag first", "cause", "fix", "no-gain", "known")
    lines = []
    body = []
    for r in rows:
        if "premise" in r:
            prem = f"{r['premise']:.2f}" + ("" if r.get("premise_holds") else " !")
        else:
            prem = "-"
        first = r.get("first") or ("ERROR" if "error" in r else "-" if "ids" not in r else "none")
        body.append(
            (
                r["id"],
                prem,
                r["expect"],
                first,
                _mark(r.get("right_cause")),
                _mark(r.get("right_fix")),
                _mark(r.get("says_no_python_gain")) if "ids" in r else "-",
                "miss" if r.get("known_miss") else "",
            )
        )
    widths = [
        max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)
    ]
    fmt = " | ".join(f"{{:{w}}}" for w in widths)
    lines.append("| " + fmt.format(*head) + " |")
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines.extend("| " + fmt.format(*b) + " |" for b in body)
    return "\n".join(lines)


def totals(rows: list[dict[str, Any]]) -> str:
    n = len(rows)
    cause = sum(1 for r in rows if r.get("right_cause"))
    fix = sum(1 for r in rows if r.get("right_fix"))
    errors = sum(1 for r in rows if "error" in r)
    premise_bad = [r["id"] for r in rows if "premise" in r and not r.get("premise_holds")]
    false_no_gain = sum(
        1 for r in rows if r.get("says_no_python_gain") and r.get("python_fix", True)
    )
    out = [
        f"first finding right: {cause}/{n}",
        f"fix names the remedy: {fix}/{n}",
        f"says no Python-side gain where there is one: {false_no_gain}/{n}",
    ]
    known = [r["id"] for r in rows if r.get("known_miss")]
    if known:
        out.append(f"known misses (counted as misses above): {len(known)}/{n}")
    now_right = [
        r["id"]
        for r in rows
        if r.get("known_miss")
        and r.get("right_cause")
        and r.get("right_fix")
        and not (r.get("says_no_python_gain") and r.get("python_fix", True))
    ]
    if now_right:
        out.append(f"known misses now right (remove their known_miss): {', '.join(now_right)}")
    if errors:
        out.append(f"errors: {errors} ({', '.join(r['id'] for r in rows if 'error' in r)})")
    if premise_bad:
        out.append(f"premise not borne out this run: {', '.join(premise_bad)}")
    return "\n".join(out)


def _process_backend() -> str:
    """The Keras backend this process would get (Keras reads ``KERAS_BACKEND`` once)."""
    return os.environ.get("KERAS_BACKEND") or "tensorflow"


def _backend_of(case_id: str) -> str | None:
    stem = case_id.replace("-", "_")
    for backend, folder in CASE_DIRS.items():
        if (folder / f"{stem}.py").is_file():
            return backend
    return None


def run_backend(
    backend: str, args: argparse.Namespace, names: list[str] | None
) -> tuple[int, list[dict[str, Any]]]:
    """One backend's table, printed by this process (its own backend) or by a child.

    The JAX cases run each in a process of its own (``corpus.run_one``): whether TensorFlow
    is loaded is part of a Keras-on-JAX program, and one case must not load it for the next.
    """
    if backend == "jax" or backend == _process_backend():
        return run_here(backend, args, names)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--backend", backend]
    cmd += ["--rounds", str(args.rounds)]
    if names:
        cmd += ["--cases", ",".join(names)]
    if args.premise_only:
        cmd.append("--premise-only")
    if args.show:
        cmd.append("--show")
    env = dict(os.environ, KERAS_BACKEND=backend)
    with tempfile.TemporaryDirectory(prefix="tfdiag-accuracy-") as tmp:
        rows_path = Path(tmp) / "rows.json"
        cmd += ["--json", str(rows_path)]
        sys.stdout.flush()
        rc = subprocess.call(cmd, env=env)
        rows = json.loads(rows_path.read_text()) if rows_path.is_file() else []
    return rc, rows


def run_here(
    backend: str, args: argparse.Namespace, names: list[str] | None
) -> tuple[int, list[dict[str, Any]]]:
    loaded = load_cases(names, backend=backend)
    isolated = backend == "jax"
    if not isolated:
        import tensorflow as tf  # import once, before the first timing

        # The retracing warnings are the cases working as modelled; they drown the table.
        tf.get_logger().setLevel("ERROR")

    rows = []
    started = time.perf_counter()
    for x in loaded:
        if isolated:
            row = run_in_child(
                x.case.id,
                backend=backend,
                rounds=args.rounds,
                premise_only=args.premise_only,
                show=args.show,
            )
        else:
            row = run_case(x, rounds=args.rounds, premise_only=args.premise_only, show=args.show)
        row.setdefault("expect", x.case.expect)
        row.setdefault("known_miss", x.case.known_miss)
        row.setdefault("total_s", 0.0)
        rows.append(row)
        status = row.get("error") or (
            f"premise {row['premise']:.2f}× (slow {1e3 * row['slow_s']:.1f} ms, "
            f"fast {1e3 * row['fast_s']:.1f} ms) first={row.get('first')} "
            f"cause={_mark(row.get('right_cause'))} fix={_mark(row.get('right_fix'))}"
        )
        stages = " ".join(
            f"{k[:-2]}={row[k]}s" for k in ("setup_s", "premise_s", "diagnose_s") if k in row
        )
        status += f" [{stages}]"
        print(f"[{row['total_s']:6.1f} s] {x.case.id}: {status}", file=sys.stderr, flush=True)
    print(f"backend: {backend}")
    print(table(rows))
    print()
    print(totals(rows))
    print(f"({len(rows)} cases in {time.perf_counter() - started:.0f} s, rounds={args.rounds})")
    return 0, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="comma-separated case ids (default: all)")
    parser.add_argument(
        "--backend",
        choices=(*CASE_DIRS, "both"),
        default="both",
        help="which corpus: tensorflow (corpus/cases/), jax (corpus/cases_jax/), or both "
        "(default; each in its own process)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="premise rounds (default 5)")
    parser.add_argument("--json", metavar="PATH", help="write the rows here")
    parser.add_argument("--premise-only", action="store_true", help="skip tfdiag")
    parser.add_argument("--show", action="store_true", help="print each report")
    args = parser.parse_args(argv)

    names = [c.strip() for c in args.cases.split(",") if c.strip()] if args.cases else None
    backends = list(CASE_DIRS) if args.backend == "both" else [args.backend]
    by_backend: dict[str, list[str] | None] = {b: None for b in backends}
    if names:
        found = {n: _backend_of(n) for n in names}
        missing = sorted(n for n, b in found.items() if b not in backends)
        if missing:
            print(f"no such case: {', '.join(missing)}", file=sys.stderr)
            return 2
        by_backend = {b: [n for n in names if found[n] == b] for b in backends}
        by_backend = {b: ns for b, ns in by_backend.items() if ns}
    rc = 0
    rows: list[dict[str, Any]] = []
    for i, (backend, backend_names) in enumerate(by_backend.items()):
        if i:
            print(flush=True)
        backend_rc, backend_rows = run_backend(backend, args, backend_names)
        rc = max(rc, backend_rc)
        rows += backend_rows
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str) + "\n")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
