"""``tfdiag catalog``: the culprit catalog and finding reference, generated from the code."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tfdiag.frontends.commands._common import print_json


def register(sub: Any) -> None:
    p = sub.add_parser(
        "catalog",
        help="print the culprit catalog and findings (markdown or json)",
        epilog="example: python -m tfdiag catalog --format json",
    )
    p.add_argument("--format", choices=("markdown", "json"), default="markdown")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tfdiag.records.catalog import default_catalog
    from tfdiag.render.catalog_doc import catalog_markdown

    if args.format == "json":
        print_json([r.to_json() for r in default_catalog().rules])
    else:
        sys.stdout.write(catalog_markdown())
    return 0
