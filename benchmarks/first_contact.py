"""What a new user sees first (#18): the quickstart's program run as they would, N times, with
K CPU-bound jobs beside it.

    python benchmarks/first_contact.py                   # 10 runs, 2 burners
    python benchmarks/first_contact.py --runs 5 --burners 0

Each run is a fresh process: it imports TensorFlow itself, builds the quickstart's model,
prints a marker on stderr, then calls ``tfdiag.profile(model.predict, x, verbose=0)`` and
``report.show()`` at ``COLUMNS=80``. Per run it prints the first finding, the native log lines
on stderr after the marker (tfdiag's own work: must be 0), whether the first 24 lines of the
view hold the first finding's id and its fix, whether severities never increase down the
list, and whether the report said the machine was busy.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NATIVE = re.compile(r"^([IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] |WARNING: All log messages before)")
MARK = "== tfdiag starts =="

PROGRAM = f"""
import json, sys
import numpy as np
import keras
import tfdiag

model = keras.Sequential([keras.layers.Input((4,)), keras.layers.Dense(2), keras.layers.Dense(1)])
model.compile("adam", "mse")
x = np.random.rand(32, 4).astype("float32")
model.predict(x, verbose=0)  # the program's own first ops (its own native lines)
print({MARK!r}, file=sys.stderr, flush=True)
report = tfdiag.profile(model.predict, x, iterations=20, verbose=0, progress=False)
report.show()
doc = {{"ids": [f.id for f in report.findings], "sev": [f.severity for f in report.findings],
       "fix": report.findings[0].fix if report.findings else "",
       "busy": bool(report.machine and report.machine.busy),
       "other": report.machine.other_cores if report.machine else None}}
print("@@" + json.dumps(doc))
"""


def _burn(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


def run_once() -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80", "TF_CPP_MIN_LOG_LEVEL": "0"}
    env.pop("TFDIAG_NATIVE_LOG", None)
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:]}
    out, _, tail = proc.stdout.rpartition("@@")
    doc = json.loads(tail)
    after = proc.stderr.split(MARK, 1)[-1].splitlines()
    first24 = "\n".join(out.splitlines()[:24])
    fix_words = " ".join(doc["fix"].split()[:6])
    ranks = [("high", "medium", "low").index(s) for s in doc["sev"]]
    return {
        "first": doc["ids"][0] if doc["ids"] else None,
        "native_lines": sum(1 for line in after if NATIVE.match(line)),
        "answer_in_24": bool(doc["ids"])
        and doc["ids"][0] in first24
        and fix_words in " ".join(first24.split()),
        "ordered": ranks == sorted(ranks),
        "busy": doc["busy"],
        "other_cores": doc["other"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--burners", type=int, default=2)
    args = parser.parse_args()
    burners = [
        multiprocessing.Process(target=_burn, args=(time.monotonic() + 3600,), daemon=True)
        for _ in range(args.burners)
    ]
    for b in burners:
        b.start()
    rows = []
    try:
        for n in range(args.runs):
            row = run_once()
            rows.append(row)
            print(n + 1, json.dumps(row), flush=True)
    finally:
        for b in burners:
            b.terminate()
    ok = [r for r in rows if "error" not in r]
    print(
        f"\n{args.runs} runs with {args.burners} CPU burner(s): first finding "
        f"per-call-input-pipeline {sum(r['first'] == 'per-call-input-pipeline' for r in ok)}"
        f"/{args.runs}; native lines after the program's own import "
        f"{sum(int(r['native_lines']) for r in ok)}; answer in the first 24 lines "
        f"{sum(bool(r['answer_in_24']) for r in ok)}/{args.runs}; severities in order "
        f"{sum(bool(r['ordered']) for r in ok)}/{args.runs}; said busy "
        f"{sum(bool(r['busy']) for r in ok)}/{args.runs}"
    )


if __name__ == "__main__":
    main()
