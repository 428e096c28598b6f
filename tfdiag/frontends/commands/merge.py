"""``tfdiag merge``: one view across the workers of a ``tf.distribute`` job."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tfdiag.frontends.commands._common import add_output_options, given, print_report


def register(sub: Any) -> None:
    p = sub.add_parser(
        "merge",
        help="merge the reports of a tf.distribute job's workers: stragglers, all-reduce cost",
        description="One view across the workers of a tf.distribute job (no TensorFlow "
        "needed): each worker's step split into callbacks, input, compute and collectives, "
        "the spread of step times, the worker the others wait for (straggler), whether "
        "collectives dominate (communication-bound), and each worker's own findings once.",
        epilog="examples:\n"
        "  python -m tfdiag merge w0.tfdiag.json w1.tfdiag.json\n"
        "  python -m tfdiag merge w*.tfdiag.json --format json --save job",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "reports", nargs="+", type=given("a report"), help="each worker's .tfdiag.json report"
    )
    p.add_argument(
        "--save", type=given("--save"), help="also save the merged view (<stem>.tfdiag.json)"
    )
    p.add_argument("--force", action="store_true", help="replace an existing saved result")
    p.add_argument(
        "--partial",
        action="store_true",
        help="merge although some tasks of the cluster have no report here (a note names them)",
    )
    add_output_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tfdiag.records.files import check_targets
    from tfdiag.records.report import report_paths
    from tfdiag.results.merge import merge

    if args.save:
        check_targets(report_paths(args.save)[:1], overwrite=args.force)
    result = merge(args.reports, partial=args.partial)
    if args.save:
        print(f"saved {result.save(args.save, overwrite=args.force)}", file=sys.stderr)
    print_report(result, args.format, args.width, args.brief)
    return 0
