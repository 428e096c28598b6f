"""``tfdiag run script.py [args...]``: a whole script, Keras calls timed per call site."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from tfdiag.frontends.commands._common import add_output_options, given, int_at_least, print_report


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run a Python script and time its Keras calls per call site (file:line)",
        description="Run a script as `python script.py args...` would, with Keras' predict,\n"
        "fit, evaluate and *_on_batch timed and charged to the line of your code that called\n"
        "them; costly sites get findings. tfdiag's options go before the script; everything\n"
        "after it is the script's own argv.",
        epilog="examples:\n"
        "  python -m tfdiag run train.py --epochs 3\n"
        "  python -m tfdiag run --format json --out train.tfdiag.json train.py\n"
        "  python -m tfdiag explain train.tfdiag.json\n"
        "exit codes: 0 the script finished, 1 it raised or exited non-zero (the result is\n"
        "still shown), 2 bad input, 130 interrupted",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--iterations",
        type=int_at_least(0, 1_000_000),
        default=10,
        help="profile each site's first call and this many more (0: time only; default 10)",
    )
    p.add_argument(
        "--no-tf-profiler",
        dest="tf_profiler",
        action="store_false",
        help="don't trace each costly site's next calls with the backend's profiler (the TF "
        "profiler, which sees tf.data's threads and the step waiting for input; Keras 3 on "
        "JAX: jax.profiler)",
    )
    p.add_argument(
        "--out",
        type=given("--out"),
        help="also save the result as JSON here (tfdiag explain reads it)",
    )
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument(
        "--script-stdout",
        type=given("--script-stdout"),
        help="write the script's own standard output to this file (tfdiag fix compares "
        "two versions' outputs so)",
    )
    add_output_options(p)
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tfdiag.capture.environment import configured_keras_backend
    from tfdiag.capture.native_log import import_tensorflow
    from tfdiag.records.catalog.backends import DEFAULT
    from tfdiag.records.files import check_targets
    from tfdiag.script.instrument import run_script

    # --out is where the command was typed, whatever folder the script chdirs into
    out = Path(args.out).absolute() if args.out else None
    if out is not None:  # before the script runs, not after an hour of it
        check_targets([out], overwrite=args.force)
    # TensorFlow's start-up log lines kept (capture/native_log.py), unless Keras runs on
    # another backend: a JAX script that never loads TensorFlow must not get it from tfdiag
    if Path(args.script).is_file() and configured_keras_backend() == DEFAULT.name:
        import_tensorflow()  # else run_script says so at once
    # JSON goes to stdout: the script's own prints (and Keras' progress bars) go to stderr.
    quiet = contextlib.redirect_stdout(sys.stderr) if args.format == "json" else None
    with contextlib.ExitStack() as stack:
        if args.script_stdout:
            own = stack.enter_context(open(args.script_stdout, "w", encoding="utf-8"))
            stack.enter_context(contextlib.redirect_stdout(own))
        elif quiet is not None:
            stack.enter_context(quiet)
        result = run_script(
            args.script, args.args, iterations=args.iterations, tf_profiler=args.tf_profiler
        )
    print_report(result, args.format, args.width, args.brief)
    if out is not None:
        print(f"saved {result.save(out, overwrite=args.force)}", file=sys.stderr)
    if result.status.startswith("interrupted"):
        return 130
    return 0 if result.ok else 1
