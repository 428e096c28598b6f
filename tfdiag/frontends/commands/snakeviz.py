"""``tfdiag snakeviz``: the run's flame graph in snakeviz's page, served by tfdiag itself on
127.0.0.1 (:mod:`tfdiag.frontends.snakeviz_server`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tfdiag.frontends.commands._common import port

#: The port when none is given; a busy one moves up (and says so), a given one never does.
DEFAULT_PORT = 8080


def register(sub: Any) -> None:
    p = sub.add_parser(
        "snakeviz",
        help="open the run's flame graph in snakeviz (127.0.0.1 only)",
        epilog="example: python -m tfdiag snakeviz predict.tfdiag.json --no-browser",
    )
    p.add_argument("path", help="a .tfdiag.json report or a .prof file")
    p.add_argument(
        "--port", type=port, help=f"default {DEFAULT_PORT} (the next free one if it is busy)"
    )
    p.add_argument("--no-browser", action="store_true", help="serve only; print the address")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tfdiag.frontends.snakeviz_server import serve
    from tfdiag.results.load import load_report

    path = Path(args.path)
    # A report's own profile, or a .prof checked for size and shape: held in memory, never
    # handed to snakeviz as a path. A bare .prof needs no iteration count here.
    report = load_report(args.path, iterations=None if path.name.endswith(".json") else 1)
    return serve(
        report.profile,
        path.name,
        port=DEFAULT_PORT if args.port is None else args.port,
        move=args.port is None,
        browser=not args.no_browser,
        say=lambda line: print(line, flush=True),
    )
