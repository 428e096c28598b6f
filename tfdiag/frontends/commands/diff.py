"""``tfdiag diff``: two saved reports of one call, before and after a change."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from tfdiag.frontends.commands._common import add_output_options, given, print_report
from tfdiag.records.text import clean

#: The exit code of ``--fail-if-slower`` when AFTER is slower: its own, not a crash's 1.
EXIT_SLOWER = 3


def factor(text: str) -> float:
    """``--fail-if-slower``: a positive number (1.2: fail when AFTER takes 20 % more)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or not 0 < value <= 1e6:
        raise argparse.ArgumentTypeError(f"must be a positive factor such as 1.2, got {text}")
    return value


def register(sub: Any) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two reports of one call: faster, slower or the same, and the findings "
        "resolved, new and persisting",
        description="Compare two saved reports of one call, BEFORE and AFTER a change (no "
        "TensorFlow needed): the per-iteration ratio AFTER/BEFORE with both runs' noise "
        "(interquartile range), a verdict (faster, slower or the same: whether the runs' "
        "interquartile intervals overlap), and the findings resolved, new and persisting by id "
        "with their impacts. Reports from different machines or versions are compared with a "
        "warning. Two `tfdiag run` results (BEFORE a `tfdiag fix --out` one, AFTER a run of "
        "the patched program) are compared by wall time, and each patch on its line.",
        epilog="examples:\n"
        "  python -m tfdiag diff before.tfdiag.json after.tfdiag.json\n"
        "  python -m tfdiag diff main.tfdiag.json branch.tfdiag.json --fail-if-slower 1.2\n"
        "  python -m tfdiag diff fix.tfdiag.json patched.tfdiag.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("before", type=given("BEFORE"), help="the report before the change")
    p.add_argument("after", type=given("AFTER"), help="the report after the change")
    p.add_argument(
        "--fail-if-slower",
        type=factor,
        metavar="X",
        help="exit 3 when AFTER is slower than X × BEFORE beyond the noise (its interquartile "
        "interval above BEFORE's scaled by X)",
    )
    add_output_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os

    from tfdiag.results.diff import diff

    result = diff(args.before, args.after)
    # The gate is decided before anything is written: a reader that stops early (a closed
    # pipe) cannot turn "slower" into a pass.
    gate = args.fail_if_slower
    slower = gate is not None and result.slower_than(gate)
    if slower:
        shown = "n/a" if result.ratio is None else f"{result.ratio:.3g}"
        print(
            f"tfdiag: AFTER is slower than {gate:g} × BEFORE beyond the noise (ratio {shown})",
            file=sys.stderr,
        )
    if args.format != "text":
        for warning in result.warnings:
            print(f"tfdiag: warning: {clean(warning)}", file=sys.stderr)
    try:
        print_report(result, args.format, args.width)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left: the verdict stands, and exit's flush is quiet
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), sys.stdout.fileno())
    return EXIT_SLOWER if slower else 0
