"""``tfdiag compare``: time a model across Keras execution methods and recommend one."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
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
from tfdiag.records.files import check_targets


def register(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="time your model with every Keras execution method; recommend the fastest",
        description="Time predict, predict_on_batch, model(x), tf.function, ... (and fit, "
        "train_on_batch, a GradientTape step, ... when y is given) on your model and data, "
        "interleaved; check each against predict; recommend the fastest safe one.",
        epilog="examples:\n"
        "  python -m tfdiag compare --model my.keras --x x.npy --y y.npy\n"
        "  python -m tfdiag compare --factory examples/seed_models.py:small --save cmp\n"
        "  python -m tfdiag compare --list-methods",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--model",
        type=given("--model"),
        help="a model file keras.models.load_model reads (.keras, .h5)",
    )
    p.add_argument(
        "--x", type=given("--x"), help="the input, one array saved with numpy.save (.npy)"
    )
    p.add_argument(
        "--y", type=given("--y"), help="targets (.npy); training methods are compared too"
    )
    p.add_argument(
        "--factory",
        type=given("--factory"),
        help="path.py:function returning (model, x, y); called per Keras flavour when it "
        "takes a `flavour` argument",
    )
    p.add_argument(
        "--flavours",
        type=given("--flavours"),
        help="with --factory: comma-separated keras3,tf_keras (default: both when tf_keras "
        "is installed and the factory takes `flavour`)",
    )
    p.add_argument(
        "--methods",
        type=given("--methods"),
        help="comma-separated method names (see --list-methods)",
    )
    p.add_argument(
        "--baseline",
        action="append",
        type=given("--baseline"),
        help="the method you call today (default predict / fit)",
    )
    p.add_argument("--repeats", type=repeats, default=10, help="timed blocks per method")
    p.add_argument("--warmup", type=warmup, default=2, help="untimed calls per method")
    p.add_argument("--batch-size", type=int_at_least(1, 1_000_000), default=32)
    p.add_argument("--list-methods", action="store_true", help="print the method table and exit")
    p.add_argument(
        "--save", type=given("--save"), help="also save the result here (<stem>.tfdiag.json)"
    )
    p.add_argument("--force", action="store_true", help="replace an existing saved result")
    add_output_options(p)
    p.set_defaults(func=run)


def _list_methods(width: int | None) -> int:
    """The method table, each row wrapped to ``width`` (``--width``, else the terminal's)."""
    import shutil
    import textwrap

    from tfdiag.measure.methods import METHODS

    width = width or shutil.get_terminal_size().columns
    indent = " " * (41 if width >= 100 else 4)  # under the call column, or a plain hang
    for m in METHODS:
        mode = "eager" if m.eager else "graph"
        about = f" — {m.about}" if m.about else ""
        row = f"{m.name:22} {m.kind:9} {mode:5}  {m.call}{about}"
        print(textwrap.fill(row, width=width, subsequent_indent=indent, break_on_hyphens=False))
    return 0


def _subjects(args: argparse.Namespace) -> tuple[Any, Any, Any, list[Any]]:
    """(model, x, y, twins) from --model/--x/--y or --factory.

    TensorFlow is imported (its start-up log lines kept, capture/native_log.py)
    once the options are checked, before the factory or the model is loaded."""
    from tfdiag.capture.native_log import import_tensorflow
    from tfdiag.measure.inputs import (
        call_factory,
        factory_spec,
        load_array,
        load_factory,
        load_model,
        takes_flavour,
    )

    if args.factory:
        if args.model or args.x or args.y:
            raise InputError("--factory returns its own model and data: drop --model/--x/--y")
        factory_spec(args.factory)  # a typo is refused before TensorFlow loads
        import_tensorflow()
        fn = load_factory(args.factory)
        if not takes_flavour(fn):
            if args.flavours:
                raise InputError("--flavours needs a factory that takes a `flavour` argument")
            model, x, y = call_factory(fn, None)
            return model, x, y, []
        flavours = _flavours(args.flavours)
        model, x, y = call_factory(fn, flavours[0])
        return model, x, y, [call_factory(fn, f)[0] for f in flavours[1:]]
    if args.flavours:
        raise InputError("--flavours applies to --factory only")
    if not args.model:
        raise InputError("give --model (with --x, and --y for training) or --factory")
    if not args.x:
        raise InputError("--model needs --x (the input, a .npy file)")
    x = load_array(args.x, "x")
    y = load_array(args.y, "y") if args.y else None
    import_tensorflow()
    return load_model(args.model), x, y, []


def _flavours(text: str | None) -> list[str]:
    if text is None:
        installed = importlib.util.find_spec("tf_keras") is not None
        return ["keras3", "tf_keras"] if installed else ["keras3"]
    flavours = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in flavours if f not in ("keras3", "tf_keras")]
    if bad or not flavours or len(set(flavours)) != len(flavours):
        raise InputError(f"--flavours takes keras3 and/or tf_keras, got {text!r}")
    return flavours


def run(args: argparse.Namespace) -> int:
    if args.list_methods:
        return _list_methods(args.width)
    from tfdiag.measure import compare
    from tfdiag.records.report import report_paths
    from tfdiag.render.progress import progress_bar

    if args.save:  # where the command was typed, whatever folder a --factory chdirs into
        args.save = os.path.abspath(args.save)
        check_targets(report_paths(args.save)[:1], overwrite=args.force)
    methods = None
    if args.methods is not None:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        if not methods:
            raise InputError("an empty value for --methods: name at least one (--list-methods)")
    model, x, y, twins = _subjects(args)
    with progress_bar("compare") as on_step:
        result = compare(
            model,
            x,
            y,
            methods=methods,
            baseline=args.baseline,
            twins=twins,
            batch_size=args.batch_size,
            warmup=args.warmup,
            repeats=args.repeats,
            on_step=on_step,
        )
    if args.save:
        path = result.save(args.save, overwrite=args.force)
        print(f"saved {path}", file=sys.stderr)
    print_report(result, args.format, args.width, args.brief)
    return 0
