"""``tfdiag explain``: re-render a saved report, or analyse any pstats dump."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from tfdiag.frontends.commands._common import (
    add_output_options,
    given,
    int_at_least,
    print_report,
)
from tfdiag.records.errors import InputError
from tfdiag.records.text import clean


def register(sub: Any) -> None:
    p = sub.add_parser(
        "explain",
        help="show the breakdown of a saved report or any pstats .prof",
        description="Re-render a saved run (no TensorFlow needed), or analyse any pstats dump.",
        epilog="examples:\n"
        "  python -m tfdiag explain predict.tfdiag.json --format json\n"
        "  python -m tfdiag explain run.prof --iterations 50\n"
        "  python -m tfdiag explain predict.tfdiag.json --plot predict-timeline.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", help="a .tfdiag.json report or a pstats .prof file")
    p.add_argument(
        "--iterations",
        type=int_at_least(1, 10**9),
        help="iterations in a bare .prof (inferred from Keras step calls if omitted)",
    )
    p.add_argument(
        "--rules",
        type=given("--rules"),
        help="a JSON file of extra culprit rules (docs/catalog.md)",
    )
    p.add_argument(
        "--findings",
        type=given("--findings"),
        help="a JSON file of your own findings (docs/catalog.md)",
    )
    p.add_argument(
        "--plot",
        metavar="PNG",
        type=given("--plot"),
        help="also write a plot of the iteration times (needs [plot])",
    )
    p.add_argument("--force", action="store_true", help="replace an existing --plot file")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="also print the native log lines TensorFlow/xprof wrote while tfdiag worked "
        "(kept in the report, off the terminal)",
    )
    add_output_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tfdiag.records.gc_pause import no_gc

    # One file read, tables of tuples derived from it and printed: the cyclic collector
    # would only rescan them (0.2 s of a 100k-function .prof).
    with no_gc():
        return _explain(args)


def _explain(args: argparse.Namespace) -> int:
    from tfdiag.advise import check_finding_rules
    from tfdiag.records.catalog import load_rules
    from tfdiag.records.catalog.finding_rules import load_finding_rules
    from tfdiag.records.catalog.rule import unmatched_rules
    from tfdiag.results.load import load_result
    from tfdiag.results.report import Report

    report = load_result(args.path, iterations=args.iterations)
    if args.rules or args.findings:
        if not isinstance(report, Report):
            raise InputError("--rules and --findings apply to profile reports only")
    if args.rules:
        rules = load_rules(args.rules)
        for line in unmatched_rules(rules, report.profile):  # else a typo'd glob is silent
            print(f"tfdiag: warning: {clean(str(args.rules))}: {clean(line)}", file=sys.stderr)
        report = replace(report, rules=rules + report.rules)
    if args.findings:
        extra = check_finding_rules(load_finding_rules(args.findings) + report.finding_rules)
        report = replace(report, finding_rules=extra)
    if args.plot:
        if not isinstance(report, Report):
            raise InputError("--plot applies to profile reports only")
        print(f"saved {report.plot_timeline(args.plot, overwrite=args.force)}", file=sys.stderr)
    print_report(report, args.format, args.width, args.brief)
    log = getattr(report, "native_log", None)
    if args.verbose and log is not None:
        print(f"native log lines kept while tfdiag worked: {log.total}", file=sys.stderr)
        for line in log.lines:
            print(f"  {clean(line)}", file=sys.stderr)
        if log.total > len(log.lines):
            print(f"  … {log.total - len(log.lines)} more not kept", file=sys.stderr)
    return 0
