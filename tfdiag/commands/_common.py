"""Helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any


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


positive_int = int_at_least(1)
port = int_at_least(1, 65535)


def add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (rich console view) or json (the report's JSON)",
    )
    p.add_argument("--width", type=positive_int, help="console width for text output")


def print_json(doc: Any) -> None:
    json.dump(doc, sys.stdout, indent=1, allow_nan=False)
    sys.stdout.write("\n")


def print_renderable(renderable: Any, width: int | None) -> None:
    from rich.console import Console

    (Console(width=width) if width else Console()).print(renderable)


def print_report(report: Any, fmt: str, width: int | None) -> None:
    """A Report (or any result with ``to_json`` and ``__rich_console__``) as text or JSON."""
    if fmt == "json":
        print_json(report.to_json())
    else:
        print_renderable(report, width)
