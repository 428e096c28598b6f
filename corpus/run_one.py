"""Run one corpus case in this process and print its row as one JSON line.

    KERAS_BACKEND=jax python -m corpus.run_one jax-predict-in-loop --backend jax --rounds 3

The JAX cases each run in a process of their own (:func:`run_in_child`): Keras on JAX
programs differ in whether TensorFlow is loaded at all (``clone_model`` and ``tf.data``
load it, most programs never do), and a case must be diagnosed as its program runs alone,
not after another case has imported TensorFlow into a shared process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from corpus.harness import Loaded, diagnose, load_cases, measure_premise, premise_holds, verdict

ROOT = Path(__file__).resolve().parents[1]


def case_row(
    loaded: Loaded,
    *,
    rounds: int,
    warmup: int = 2,
    premise_only: bool = False,
    show: bool = False,
) -> dict[str, Any]:
    """Set-up, premise and diagnosis of one case, as a row (an error is a row too)."""
    case = loaded.case
    row: dict[str, Any] = {
        "id": case.id,
        "backend": case.backend,
        "expect": case.expect,
        "fix_mentions": list(case.fix_mentions),
        "premise_claimed": case.premise,
        "python_fix": case.python_fix,
        "iterations": case.iterations,
        "source": case.source,
        "known_miss": case.known_miss,
    }
    stage = "setup"
    t0 = time.perf_counter()
    state = None
    try:
        state = loaded.setup()
        row["setup_s"] = round(time.perf_counter() - t0, 2)
        stage = "premise"
        t1 = time.perf_counter()
        p = measure_premise(loaded, state, rounds=rounds, warmup=warmup)
        row["premise_s"] = round(time.perf_counter() - t1, 2)
        row["slow_s"] = p.slow_s
        row["fast_s"] = p.fast_s
        row["premise"] = round(p.speedup, 2)
        row["premise_holds"] = premise_holds(case, p.speedup)
        if not premise_only:
            stage = "diagnose"
            t2 = time.perf_counter()
            report = diagnose(loaded, state)
            row["diagnose_s"] = round(time.perf_counter() - t2, 2)
            v = verdict(case, report)
            row.update(
                first=v.first,
                ids=list(v.ids),
                fix=v.fix,
                right_cause=v.right_cause,
                right_fix=v.right_fix,
                says_no_python_gain=v.says_no_python_gain,
                findings=[
                    {"id": f.id, "impact": f.impact, "evidence": list(f.evidence), "fix": f.fix}
                    for f in report.findings
                ],
                notes=list(report.notes),
            )
            if show:
                print(f"\n===== {case.id} =====", file=sys.stderr)
                report.show()
    except Exception as exc:  # noqa: BLE001 - one broken case is one row, not a crash
        row["error"] = f"{stage}: {type(exc).__name__}: {exc}"
        row["traceback"] = traceback.format_exc()
    finally:
        state = None
    row["total_s"] = round(time.perf_counter() - t0, 2)
    return row


def run_in_child(
    case_id: str,
    *,
    backend: str,
    rounds: int,
    warmup: int = 2,
    premise_only: bool = False,
    show: bool = False,
    timeout: float = 900,
) -> dict[str, Any]:
    """:func:`case_row` in a fresh Python process with ``KERAS_BACKEND=backend``."""
    cmd = [sys.executable, "-m", "corpus.run_one", case_id, "--backend", backend]
    cmd += ["--rounds", str(rounds), "--warmup", str(warmup)]
    if premise_only:
        cmd.append("--premise-only")
    if show:
        cmd.append("--show")
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=path)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        done = subprocess.run(
            cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"id": case_id, "backend": backend, "error": f"timed out after {timeout:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {
            "id": case_id,
            "backend": backend,
            "error": f"child exited {done.returncode} without a row",
        }
    row: dict[str, Any] = json.loads(lines[-1])
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case")
    parser.add_argument("--backend", default="tensorflow")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--premise-only", action="store_true")
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args(argv)
    try:
        loaded = load_cases([args.case], backend=args.backend)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    if not loaded:
        print(f"no such case: {args.case}", file=sys.stderr)
        return 2
    row = case_row(
        loaded[0],
        rounds=args.rounds,
        warmup=args.warmup,
        premise_only=args.premise_only,
        show=args.show,
    )
    sys.stdout.write(json.dumps(row, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
