"""``python -m tfdiag`` / ``tfdiag``. Subcommands live in :mod:`tfdiag.frontends.commands`.

Exit codes: 0 ok, 2 bad input (one line on stderr, no traceback), 1 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn, TextIO

from tfdiag.records.errors import InputError, TfdiagWarning
from tfdiag.records.text import clean
from tfdiag.records.version import __version__

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise InputError(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    from tfdiag.frontends.commands import COMMANDS

    parser = _Parser(
        prog="tfdiag",
        description="Why is this TensorFlow/Keras call slow, and what should I call instead?",
        epilog="exit codes: 0 ok, 1 internal error (run: the script failed), 2 bad input, "
        "130 interrupted",
    )
    parser.add_argument("--version", action="version", version=f"tfdiag {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if issubclass(category, TfdiagWarning):
                _say(f"warning: {message}")  # one line, as an error is
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args))
    except InputError as exc:
        _say(f"error: {exc}")
        return EXIT_INPUT
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the one place that turns a bug into exit code 1
        if os.environ.get("TFDIAG_DEBUG"):
            raise
        _say(f"internal error: {type(exc).__name__}: {exc} (set TFDIAG_DEBUG=1 for the traceback)")
        return EXIT_INTERNAL


def _say(message: str) -> None:
    """One line on stderr: whatever a file or a path put in the message is shown as text."""
    print("tfdiag: " + clean(" ".join(message.split("\n"))), file=sys.stderr)
