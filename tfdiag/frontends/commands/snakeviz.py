"""``tfdiag snakeviz``: the run's flame graph in snakeviz, bound to 127.0.0.1 only."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tfdiag.frontends.commands._common import port


def register(sub: Any) -> None:
    p = sub.add_parser(
        "snakeviz",
        help="open the run's flame graph in snakeviz (127.0.0.1 only)",
        epilog="example: python -m tfdiag snakeviz predict.tfdiag.json --no-browser",
    )
    p.add_argument("path", help="a .tfdiag.json report or a .prof file")
    p.add_argument("--port", type=port, default=8080)
    p.add_argument("--no-browser", action="store_true", help="serve only; print the address")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tfdiag.records.report import report_paths
    from tfdiag.results.load import load_report

    path = Path(args.path)
    # Load first: checks size and shape. A bare .prof needs no iteration count here.
    report = load_report(path, iterations=None if path.name.endswith(".json") else 1)
    temp: Path | None = None
    if path.name.endswith(".json"):
        prof = report_paths(path)[1]
        if not prof.exists():
            fd, tmp = tempfile.mkstemp(prefix=f"{prof.stem}.", suffix=".prof")
            with os.fdopen(fd, "wb") as fh:
                fh.write(report.profile.to_prof_bytes())
            prof = temp = Path(tmp)
    else:
        prof = path
    cmd = [sys.executable, "-m", "snakeviz", "-H", "127.0.0.1", "-p", str(args.port)]
    if args.no_browser:
        cmd.append("-s")
    cmd.append(str(prof))
    print(f"snakeviz for {prof}, bound to 127.0.0.1 only (Ctrl-C stops it)", flush=True)
    try:
        return serve(cmd)
    finally:
        if temp is not None:
            temp.unlink(missing_ok=True)


def serve(cmd: list[str]) -> int:
    """Run a server in a child process; SIGTERM or Ctrl-C here stops the child too."""
    child = subprocess.Popen(cmd)

    def stop(signum: int, frame: object) -> None:
        child.terminate()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.terminate()
        child.wait()
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
