"""A small run of ``benchmarks/fuzz.py``: mutants of real saved results through ``explain``
end with no internal error, hang, traceback or control character, and crafted save locks
and journals beside a report act on nothing outside its set (docs/hardening.md)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_a_small_fuzz_run_has_only_ok_and_clear_errors() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fuzz.py"), "--mutants", "500"]
        + ["--prof", "80", "--journals", "80", "--seed", "7"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    counts = {
        line[:16].strip(): [int(n.replace(",", "")) for n in line[16:].split()]
        for line in proc.stdout.splitlines()
        if line[:16].strip() in (*BAD, "ok", "clear error")
    }
    assert sum(counts["ok"]) > 50 and sum(counts["clear error"]) > 50, proc.stdout
    assert counts["ok"][2] + counts["clear error"][2] == 80, proc.stdout  # the journals
    for outcome in BAD:
        assert counts[outcome] == [0, 0, 0], proc.stdout


BAD = ("internal error", "hang", "traceback", "unsafe output", "acted outside")
