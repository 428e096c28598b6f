"""Helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from tfdiag.records.errors import InputError
from tfdiag.records.jsontext import indented_json
from tfdiag.records.text import clean


def int_at_least(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for integers in ``[minimum, maximum]``, with a one-line error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {value}")
        return value

    return parse


port = int_at_least(1, 65535)
#: Every count option has a ceiling: a typo of a few zeros is refused, not run for days.
iterations = int_at_least(1, 1_000_000)
repeats = int_at_least(1, 1000)
warmup = int_at_least(1, 1000)
width = int_at_least(20, 1000)


def verify_seconds(text: str) -> float:
    """``--verify-s``: seconds in [0, 1e6] (0: verify nothing, say so per finding)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= 1e6:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1e6 seconds, got {text}")
    return value


def given(option: str) -> Callable[[str], str]:
    """An argparse ``type`` refusing an empty value (``--save ""`` is a mistake, not "no
    file", and ``--methods ""`` is not "every method")."""

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"an empty value for {option}: give one")
        return text

    return parse


def add_output_options(p: argparse.ArgumentParser) -> None:
    from tfdiag.render.formats import NAMES

    p.add_argument(
        "--format",
        choices=NAMES,
        default="text",
        help="text (the console view), json (raw records and derived views), or another "
        "format of the result (pstats, png, csv, ...: see docs/cli.md); binary formats must "
        "be redirected to a file",
    )
    p.add_argument("--width", type=width, help="console width for text output (20 to 1000)")
    p.add_argument(
        "--brief",
        action="store_true",
        help="text output: the findings only (the whole view without it)",
    )


def print_json(doc: Any) -> None:
    sys.stdout.write(indented_json(doc))
    sys.stdout.write("\n")


def print_report(result: Any, fmt: str, width: int | None, brief: bool = False) -> None:
    """Any result in format ``fmt``: the console view on the terminal (with colour) for
    ``text`` (the short one when ``brief``), else what the format registry writes."""
    if fmt == "text":
        from rich.console import Console

        class _Console(Console):
            def on_broken_pipe(self) -> None:  # rich exits 1 itself; the command decides
                self.quiet = True
                raise BrokenPipeError

        (_Console(width=width) if width else _Console()).print(result.view(brief))
        return
    data = result.render(fmt, width=width)
    if isinstance(data, bytes):
        if sys.stdout.isatty():
            raise InputError(f"--format {fmt} writes binary data: redirect it to a file")
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:  # CSV or JSON: data kept as it is, but never a terminal escape on a terminal
        data = clean(data) if sys.stdout.isatty() else data
        for at in range(0, len(data), _CHUNK):  # encoded a chunk at a time, not all at once
            sys.stdout.write(data[at : at + _CHUNK])


_CHUNK = 1 << 20
