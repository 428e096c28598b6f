"""``tfdiag fix script.py [args...]``: each finding's fix as a patch to the user's file,
measured on both versions of the program before it is offered; ``--apply`` writes it."""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
from pathlib import Path
from typing import Any

from tfdiag.frontends.commands._common import given, int_at_least, width
from tfdiag.records.errors import InputError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "fix",
        help="propose each finding's fix as a patch to your script, measured before offered",
        description="Run the script as `tfdiag run` does, turn each finding's fix into an edit\n"
        "of your line (a concrete syntax tree: comments and formatting kept), run the\n"
        "original and the patched program in a temporary folder (interleaved, the same\n"
        "arguments), and offer a patch only when it is faster beyond the noise and the\n"
        "outputs agree. Nothing is written without --apply.",
        epilog="examples:\n"
        "  python -m tfdiag fix train.py --epochs 3\n"
        "  python -m tfdiag fix --apply train.py\n"
        "  python -m tfdiag fix --report train.tfdiag.json\n"
        "  python -m tfdiag fix --out fix.tfdiag.json train.py\n"
        "exit codes: 0 proposals shown (or nothing to fix), 2 bad input (the script fails\n"
        "as written, a file changed since the run, a path outside the script's folder, a\n"
        "command typed neither in the script's folder tree nor in a folder above it)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--apply", action="store_true", help="write each verified patch (a backup beside)"
    )
    p.add_argument(
        "--backup",
        type=given("--backup"),
        default=".orig",
        help="the backup's suffix (default .orig: train.py.orig)",
    )
    p.add_argument(
        "--runs",
        type=int_at_least(1, 20),
        default=2,
        help="runs of each version, interleaved (default 2)",
    )
    p.add_argument(
        "--rtol", type=float, default=1e-3, help="relative tolerance for numbers in the output"
    )
    p.add_argument("--report", type=given("--report"), help="a saved `tfdiag run` report")
    p.add_argument(
        "--out",
        type=given("--out"),
        help="also save the run report with each finding's patch and figures in it, as "
        "`tfdiag run --out` saves (JSON; .html: the page); tfdiag explain and diff read it",
    )
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--width", type=width, help="console width for text output")
    p.add_argument("script", nargs="?", help="the Python script (not with --report)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    p.set_defaults(func=fix)


def _diagnosed(args: argparse.Namespace) -> Any:
    """The script's ``tfdiag run`` result: run now, or read from ``--report``."""
    if args.report:
        from tfdiag.results.load import load_result
        from tfdiag.results.script import ScriptResult

        result = load_result(args.report)
        if not isinstance(result, ScriptResult):
            raise InputError(f"{args.report} is not a `tfdiag run` report")
        if not Path(result.script).is_file():
            raise InputError(f"{result.script}: the report's script is not here")
        # A report is data that may come from anyone; this is the one command that runs what
        # a report names: only a script under the folder it is typed in, and said first.
        if not Path(result.script).resolve().is_relative_to(Path.cwd().resolve()):
            raise InputError(
                f"{result.script}: the report's script is outside this folder; run "
                "`tfdiag fix` from the script's folder (or a folder above it)"
            )
        shown = " ".join(shlex.quote(a) for a in (result.script, *result.argv))
        print(f"tfdiag: the report's command: python {shown}", file=sys.stderr)
        return result
    if not args.script:
        raise InputError("give a script, or --report with a saved `tfdiag run` report")
    if not Path(args.script).is_file():
        raise InputError(f"{args.script}: no such script")
    from tfdiag.fix.verify_patch import copy_root

    copy_root(Path(args.script).resolve().parent, Path.cwd().resolve())  # before any run
    from tfdiag.capture.native_log import import_tensorflow
    from tfdiag.script.instrument import run_script

    import_tensorflow()
    with contextlib.redirect_stdout(sys.stderr):  # the script's prints: not the patches
        return run_script(args.script, args.args, tf_profiler=False)


def fix(args: argparse.Namespace) -> int:
    from tfdiag.fix.verify_patch import verify
    from tfdiag.records.files import check_targets

    # --out is where the command was typed; checked before anything runs, not after it
    out = Path(args.out).absolute() if args.out else None
    if out is not None:
        check_targets([out], overwrite=args.force)
    result = _diagnosed(args)
    script, argv = Path(result.script), list(result.argv)
    if not result.ok:
        raise InputError(f"{script} fails as written ({result.status}): nothing is patched")
    proposals = []
    for p in result.patches():
        if p.edit is not None:
            print(f"tfdiag: verifying {p.location} ({p.kind}) …", file=sys.stderr)
            p = p.measured(
                verify(p.edit, script, argv, relpath=p.relpath, runs=args.runs, rtol=args.rtol)
            )
        proposals.append(p)
    _show(args, str(script), argv, proposals)
    if out is not None:
        _save(result, proposals, out, args)
    if args.apply:
        _apply(script, proposals, args.backup)
    return 0


def _show(args: argparse.Namespace, script: str, argv: list[str], proposals: list[Any]) -> None:
    from rich.console import Console

    from tfdiag.frontends.commands._common import print_json
    from tfdiag.render.fix_console import fix_to_json, fix_view

    if args.format == "json":
        print_json(fix_to_json(script, argv, proposals))
    else:
        (Console(width=args.width) if args.width else Console()).print(fix_view(script, proposals))


def _save(result: Any, proposals: list[Any], out: Path, args: argparse.Namespace) -> None:
    """The run report with every finding's patch record in it (``fix``), saved as
    ``tfdiag run --out`` saves: the whole file or none, an existing one only with --force."""
    from dataclasses import replace

    from tfdiag.records.patches import FixRecord

    records = tuple(r for p in proposals for r in p.records())
    saved = replace(result, fix=FixRecord(records, runs=args.runs, rtol=args.rtol))
    print(f"saved {saved.save(out, overwrite=args.force)}", file=sys.stderr)


def _apply(script: Path, proposals: list[Any], suffix: str) -> None:
    """The fastest verified patch of each file, written; the others wait for the next run
    (each was measured against the file as it is now)."""
    from tfdiag.fix.apply import check, write

    root = script.resolve().parent
    best: dict[str, Any] = {}
    for p in proposals:
        if p.offered and (
            p.edit.file not in best or p.verified.ratio > best[p.edit.file].verified.ratio
        ):
            best[p.edit.file] = p
    if not best:
        print("tfdiag: nothing written: no patch verified", file=sys.stderr)
        return
    for p in best.values():  # every file checked before any is written
        check(p.edit, root)
    for p in best.values():
        done = write(p.edit, root, suffix)
        sys.stdout.write(p.patch)
        print(f"tfdiag: wrote {done.path} (the old one is {done.backup.name})", file=sys.stderr)
    left = [p for p in proposals if p.offered and p not in best.values()]
    if left:
        print(
            f"tfdiag: {len(left)} more verified patch(es) of the same file(s): "
            "run `tfdiag fix` again to measure them on the patched file",
            file=sys.stderr,
        )
