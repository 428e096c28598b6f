"""``tfdiag capture``: trace a running tf.distribute job through its workers' profiler servers."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tfdiag.frontends.commands._common import add_output_options, given, int_at_least, print_report


def register(sub: Any) -> None:
    p = sub.add_parser(
        "capture",
        help="trace a running tf.distribute job remotely (TF profiler servers) and merge it",
        description="Ask each worker's TF profiler server (tf.profiler.experimental.server."
        "start(port) in the worker) for a trace of DURATION ms at once, read each offline "
        "with xprof into an op-level report, and show the merged view (tfdiag merge).",
        epilog="example:\n"
        "  python -m tfdiag capture grpc://10.0.0.1:6009,grpc://10.0.0.2:6009 "
        "--duration-ms 2000 --out job\n"
        "  (writes job.tfdiag.json, the merged view, and job.w0.tfdiag.json, job.w1... with "
        "each worker's trace)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "addresses",
        type=given("the addresses"),
        help="the workers' profiler addresses, comma-separated, in worker order",
    )
    p.add_argument(
        "--duration-ms",
        type=int_at_least(1, 600_000),
        default=2000,
        help="how long to trace (default 2000)",
    )
    p.add_argument("--out", type=given("--out"), help="save as <out>.tfdiag.json + <out>.w<i>.*")
    p.add_argument("--force", action="store_true", help="replace existing saved files")
    add_output_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tfdiag.capture.remote import capture, capture_paths, parse_addresses, save_capture
    from tfdiag.records.files import check_targets
    from tfdiag.records.report import report_paths

    addresses = parse_addresses(args.addresses)
    if args.out:
        merged, workers = capture_paths(args.out, len(addresses))
        check_targets(
            [merged, *(p for w in workers for p in report_paths(w))], overwrite=args.force
        )
    result, reports = capture(addresses, duration_ms=args.duration_ms)
    if args.out:
        saved = save_capture(result, reports, args.out, overwrite=args.force)
        print(
            f"saved {', '.join(str(p) for p in saved if p.name.endswith('.json'))}", file=sys.stderr
        )
    print_report(result, args.format, args.width, args.brief)
    return 0
