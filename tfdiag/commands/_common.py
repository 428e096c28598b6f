"""Helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


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
