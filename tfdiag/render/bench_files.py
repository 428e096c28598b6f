"""The bench grid as files: its JSON (raw block times plus the seeds' percentages) and a CSV,
one row per cell, for a spreadsheet like the seeds' own."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from typing import Any

from tfdiag.records.bench import BenchRecord
from tfdiag.render.document import header

CSV_COLUMNS = (
    "flavour",
    "model",
    "data",
    "loop",
    "input",
    "mode",
    "median_s",
    "iqr_s",
    "noisy",
    "iterations_per_block",
    "blocks",
    "gve_percent",
    "error",
)


def bench_to_json(result: BenchRecord) -> dict[str, Any]:
    return {
        **header(result),
        "settings": {
            k: list(v) if isinstance(v, tuple) else v for k, v in asdict(result.settings).items()
        },
        "environment": result.environment.to_json(),
        "cells": [
            {
                **{k: getattr(c, k) for k in ("model", "data", "flavour", "loop", "input")},
                "mode": c.mode,
                "median_s": c.median_s,
                "iqr_s": c.iqr_s,
                "noisy": c.noisy,
                "gve_percent": result.gve((c.flavour, c.model, c.data, c.input), c.loop),
                "error": c.error,
                "number": c.number,
                "times_s": list(c.times_s),
                "warmup_s": list(c.warmup_s),
            }
            for c in result.cells
        ],
    }


def bench_to_csv(result: BenchRecord) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in result.cells:
        gve = result.gve((c.flavour, c.model, c.data, c.input), c.loop)
        writer.writerow(
            (
                c.flavour,
                c.model,
                c.data,
                c.loop,
                c.input,
                c.mode,
                _num(c.median_s),
                _num(c.iqr_s),
                int(c.noisy),
                c.number,
                len(c.times_s),
                "" if gve is None else f"{gve:.1f}",
                c.error or "",
            )
        )
    return out.getvalue()


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"
