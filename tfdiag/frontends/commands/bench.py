"""``tfdiag bench``: the seeds' benchmark grid, with a progress bar, a table, JSON and CSV."""

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
    repeats,
    warmup,
)
from tfdiag.records.errors import InputError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "bench",
        help="the seeds' grid: Conv1D models × data sizes × fit/train_on_batch × "
        "numpy/tf.data × graph/eager",
        description="The seeds' benchmark grid. The full grid takes hours on a CPU; "
        "--quick is a CI-sized subset (small model, small data, few iterations).",
        epilog="examples:\n"
        "  python -m tfdiag bench --quick --out bench.json\n"
        "  python -m tfdiag bench --models small,medium --data small,medium --repeats 3",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--quick", action="store_true", help="small model, small data, 5 iterations")
    p.add_argument("--models", type=given("--models"), help="comma-separated: small,medium,large")
    p.add_argument(
        "--data",
        type=given("--data"),
        help="comma-separated: small,medium,large (length 140/1400/14000)",
    )
    p.add_argument(
        "--flavours",
        type=given("--flavours"),
        help="comma-separated: keras3,tf_keras (default keras3)",
    )
    p.add_argument(
        "--iterations",
        type=int_at_least(1, 100_000),
        help="iterations per timed block (default: the seeds' 200/100/50 by model size)",
    )
    p.add_argument("--repeats", type=repeats, help="timed blocks per cell (default 5)")
    p.add_argument("--warmup", type=warmup, help="untimed iterations per cell (default 1)")
    p.add_argument("--out", type=given("--out"), help="write <stem>.json and <stem>.csv")
    p.add_argument("--force", action="store_true", help="replace existing output files")
    add_output_options(p)
    p.set_defaults(func=run)


def _names(text: str, allowed: tuple[str, ...], option: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    bad = [n for n in names if n not in allowed]
    if bad or not names or len(set(names)) != len(names):
        raise InputError(f"{option} takes {','.join(allowed)}, got {text!r}")
    return names


def settings_from(args: argparse.Namespace) -> Any:
    from tfdiag.measure.bench import QUICK, configs
    from tfdiag.measure.seed_models import SIZES
    from tfdiag.records.bench import BenchSettings

    s = QUICK if args.quick else BenchSettings()
    if args.models is not None:
        s = replace(s, models=_names(args.models, SIZES, "--models"))
    if args.data is not None:
        s = replace(s, data=_names(args.data, SIZES, "--data"))
    if args.flavours is not None:
        s = replace(s, flavours=_names(args.flavours, ("keras3", "tf_keras"), "--flavours"))
    for field in ("iterations", "repeats", "warmup"):
        if getattr(args, field) is not None:
            s = replace(s, **{field: getattr(args, field)})
    configs(s)  # fails now, not after an hour, when nothing in the grid fits
    return s


def run(args: argparse.Namespace) -> int:
    from tfdiag.capture.native_log import import_tensorflow
    from tfdiag.measure.bench import run_bench
    from tfdiag.records.bench import bench_paths
    from tfdiag.records.files import check_targets
    from tfdiag.render.progress import progress_bar

    settings = settings_from(args)
    if args.out:
        check_targets(bench_paths(args.out), overwrite=args.force)
    import_tensorflow()  # its start-up log lines kept (capture/native_log.py)
    if "tf_keras" in settings.flavours:
        from tfdiag.measure.seed_models import keras_module

        keras_module("tf_keras")  # not installed: one line now, not mid-run
    with progress_bar("bench") as on_step:
        result = run_bench(settings, on_step=on_step)
    if args.out:
        written = result.save(args.out, overwrite=args.force)
        print("saved " + " and ".join(str(p) for p in written), file=sys.stderr)
    print_report(result, args.format, args.width, args.brief)
    return 0
