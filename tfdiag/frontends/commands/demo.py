"""``tfdiag demo``: the seed-003 case end to end."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tfdiag.frontends.commands._common import (
    add_output_options,
    given,
    iterations,
    print_report,
    verify_seconds,
)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="the seed-003 case end to end: a tiny Dense model's predict × 20",
        epilog="example: python -m tfdiag demo --flavour tf_keras --save demo.tfdiag.json",
    )
    p.add_argument("--flavour", choices=("keras3", "tf_keras"), default="keras3")
    p.add_argument("--iterations", type=iterations, default=20)
    p.add_argument("--save", type=given("--save"), help="also save the report (and its .prof) here")
    p.add_argument("--force", action="store_true", help="replace an existing saved report")
    p.add_argument("--sampling", action="store_true", help="also run the sampling probe")
    p.add_argument("--tf-profiler", action="store_true", help="also run the TF profiler probe")
    p.add_argument(
        "--no-verify",
        dest="verify",
        action="store_false",
        help="don't measure each finding's fix against the call (on by default: docs/verify.md)",
    )
    p.add_argument(
        "--verify-s",
        type=verify_seconds,
        default=60.0,
        help="seconds verification may take (default 60)",
    )
    add_output_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tfdiag.capture.native_log import import_tensorflow
    from tfdiag.capture.runner import Interrupted
    from tfdiag.frontends.demo import run_demo
    from tfdiag.records.files import check_targets
    from tfdiag.records.report import report_paths
    from tfdiag.render.progress import first_line

    if args.save:  # before TensorFlow is imported and the model profiled
        check_targets(report_paths(args.save), overwrite=args.force)

    # TensorFlow's import and the model's build take seconds before the first bar.
    first_line(
        "tfdiag demo: importing TensorFlow, then profiling a tiny model's predict "
        f"× {args.iterations}…"
    )
    import_tensorflow()  # its start-up log lines kept (capture/native_log.py)
    status = 0
    try:
        report = run_demo(
            flavour=args.flavour,
            iterations=args.iterations,
            sampling=args.sampling,
            tf_profiler=args.tf_profiler,
            verify=args.verify,
            verify_s=args.verify_s,
        )
    except Interrupted as exc:
        if exc.report is None:
            raise
        print(f"tfdiag: {exc} — showing it", file=sys.stderr)
        report, status = exc.report, 130
    print_report(report, args.format, args.width, args.brief)
    if args.save:
        written = report.save(args.save, overwrite=args.force)
        print("saved " + ", ".join(str(p) for p in written), file=sys.stderr)
    return status
