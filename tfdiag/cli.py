"""``python -m tfdiag`` / ``tfdiag``: explain, snakeviz, demo, catalog.

Exit codes: 0 ok, 2 bad input (one line on stderr), 1 internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from tfdiag.errors import InputError

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise InputError(f"{message} (see `{self.prog} --help`)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _print_report(report: object, fmt: str, width: int | None) -> None:
    from tfdiag.report import Report

    assert isinstance(report, Report)
    if fmt == "json":
        json.dump(report.to_json(), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        from rich.console import Console

        report.show(Console(width=width) if width else Console())


def _cmd_explain(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from tfdiag.catalog import load_rules
    from tfdiag.load import load_report

    report = load_report(args.path, iterations=args.iterations)
    if args.rules:
        report = replace(report, rules=load_rules(args.rules) + report.rules)
    _print_report(report, args.format, args.width)
    return EXIT_OK


def _cmd_snakeviz(args: argparse.Namespace) -> int:
    from tfdiag.load import load_report
    from tfdiag.report import report_paths

    path = Path(args.path)
    report = load_report(path, iterations=1)  # validates size and shape before snakeviz reads it
    if path.name.endswith(".json"):
        prof = report_paths(path)[1]
        if not prof.exists():
            fd, tmp = tempfile.mkstemp(prefix=f"{prof.stem}.", suffix=".prof")
            with os.fdopen(fd, "wb") as fh:
                fh.write(report.profile.to_prof_bytes())
            prof = Path(tmp)
    else:
        prof = path
    cmd = [sys.executable, "-m", "snakeviz", "-H", "127.0.0.1", "-p", str(args.port)]
    if args.no_browser:
        cmd.append("-s")
    cmd.append(str(prof))
    print(
        f"snakeviz on http://127.0.0.1:{args.port}/ (bound to 127.0.0.1 only) for {prof}",
        flush=True,
    )
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    from tfdiag.demo import run_demo

    report = run_demo(flavour=args.flavour, iterations=args.iterations)
    if args.save:
        json_path, prof_path = report.save(args.save, overwrite=args.force)
        print(f"saved {json_path} and {prof_path}", file=sys.stderr)
    _print_report(report, args.format, args.width)
    return EXIT_OK


def _cmd_catalog(args: argparse.Namespace) -> int:
    from tfdiag.catalog import default_catalog
    from tfdiag.render.catalog_doc import catalog_markdown

    if args.format == "json":
        json.dump([r.to_json() for r in default_catalog().rules], sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(catalog_markdown())
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tfdiag",
        description="Why is this TensorFlow/Keras call slow, and what should I call instead?",
        epilog="exit codes: 0 ok, 2 bad input, 1 internal error",
    )
    from tfdiag import __version__

    parser.add_argument("--version", action="version", version=f"tfdiag {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def output_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--format",
            choices=("text", "json"),
            default="text",
            help="text (rich console view) or json (the report's JSON)",
        )
        p.add_argument("--width", type=_positive_int, help="console width for text output")

    p = sub.add_parser(
        "explain",
        help="show the breakdown of a saved report or any pstats .prof",
        description="Re-render a saved run (no TensorFlow needed), or analyse any pstats dump.",
        epilog="example: python -m tfdiag explain predict.tfdiag.json --format json\n"
        "         python -m tfdiag explain run.prof --iterations 50",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", help="a .tfdiag.json report or a pstats .prof file")
    p.add_argument(
        "--iterations",
        type=_positive_int,
        help="iterations in a bare .prof (inferred from Keras step calls if omitted)",
    )
    p.add_argument("--rules", help="a JSON file of extra culprit rules (docs/catalog.md)")
    output_options(p)
    p.set_defaults(func=_cmd_explain)

    p = sub.add_parser(
        "snakeviz",
        help="open the run's flame graph in snakeviz (127.0.0.1 only)",
        epilog="example: python -m tfdiag snakeviz predict.tfdiag.json --no-browser",
    )
    p.add_argument("path", help="a .tfdiag.json report or a .prof file")
    p.add_argument("--port", type=_positive_int, default=8080)
    p.add_argument("--no-browser", action="store_true", help="serve only; print the address")
    p.set_defaults(func=_cmd_snakeviz)

    p = sub.add_parser(
        "demo",
        help="the seed-003 case end to end: a tiny Dense model's predict × 20",
        epilog="example: python -m tfdiag demo --flavour tf_keras --save demo.tfdiag.json",
    )
    p.add_argument("--flavour", choices=("keras3", "tf_keras"), default="keras3")
    p.add_argument("--iterations", type=_positive_int, default=20)
    p.add_argument("--save", help="also save the report (and its .prof) here")
    p.add_argument("--force", action="store_true", help="replace an existing saved report")
    output_options(p)
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser(
        "catalog",
        help="print the culprit catalog (markdown or json)",
        epilog="example: python -m tfdiag catalog > docs/catalog-table.md",
    )
    p.add_argument("--format", choices=("markdown", "json"), default="markdown")
    p.set_defaults(func=_cmd_catalog)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args))
    except InputError as exc:
        print(f"tfdiag: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("tfdiag: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the one place that turns a bug into exit code 1
        if os.environ.get("TFDIAG_DEBUG"):
            raise
        print(
            f"tfdiag: internal error: {type(exc).__name__}: {exc} "
            "(set TFDIAG_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
