"""``tfdiag tensorboard``: the run's TF profiler trace in TensorBoard, bound to 127.0.0.1 only."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import Any

from tfdiag.frontends.commands._common import port
from tfdiag.records.errors import InputError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "tensorboard",
        help="open the run's TF profiler trace in TensorBoard's Profile tab (127.0.0.1 only)",
        epilog="example: python -m tfdiag tensorboard run.tfdiag.json --port 6006",
    )
    p.add_argument("path", help="a .tfdiag.json report saved from profile(..., tf_profiler=True)")
    p.add_argument("--port", type=port, default=6006)
    p.set_defaults(func=run)


def logdir_for(path: Path) -> Path:
    """The saved logdir beside the report, checked before TensorBoard starts."""
    from tfdiag.render.artefacts import artefact_paths
    from tfdiag.results.load import load_report

    report = load_report(path)  # checks size and shape first; run() took only a .json
    logdir = artefact_paths(path).logdir
    if not any(logdir.glob("plugins/profile/*/*.xplane.pb")):
        traced = report.probes is not None and report.probes.tf_profile is not None
        why = "it is missing" if traced else "the run was profiled without tf_profiler=True"
        raise InputError(f"{path}: no TF profiler trace at {logdir} ({why})")
    return logdir


def run(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.name.endswith(".json"):
        raise InputError(f"{path}: expected a .tfdiag.json report")
    logdir = logdir_for(path)
    if importlib.util.find_spec("tensorboard") is None:
        raise InputError("TensorBoard is not installed: pip install tensorboard")
    from tensorboard import program

    tb = program.TensorBoard()
    tb.configure(
        argv=[None, "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(args.port)]
    )
    print(
        f"TensorBoard for {logdir}, bound to 127.0.0.1 only (Ctrl-C stops it): "
        f"http://127.0.0.1:{args.port}/#profile",
        flush=True,
    )
    try:
        failed = tb.main()  # -1 after TensorBoard's own "ERROR: ..." line (a port in use)
    except KeyboardInterrupt:
        return 0
    return 2 if failed else 0
