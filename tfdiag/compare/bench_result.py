"""The bench grid's result: raw block times per cell, the seeds' percentages derived.

Saved as JSON (``"kind": "bench"``, read back by ``explain``) and as CSV, one row
per cell, for a spreadsheet like the seeds' own.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfdiag import __version__
from tfdiag._atomic import write_set
from tfdiag._renderable import Renderable
from tfdiag.compare.measure import (
    TimedBlocks,
    signed_percent,
)
from tfdiag.compare.seed_models import SEED_ITERATIONS, SIZES
from tfdiag.errors import InputError
from tfdiag.report import SCHEMA_VERSION, Environment

if TYPE_CHECKING:
    from rich.console import RenderableType

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


@dataclass(frozen=True)
class BenchSettings:
    models: tuple[str, ...] = SIZES
    data: tuple[str, ...] = SIZES
    flavours: tuple[str, ...] = ("keras3",)
    #: Iterations per timed block; ``None``: the seeds' 200/100/50 by model size.
    iterations: int | None = None
    repeats: int = 5
    warmup: int = 1

    def iterations_for(self, model: str) -> int:
        return self.iterations or SEED_ITERATIONS[model]


@dataclass(frozen=True)
class BenchCell(TimedBlocks):
    """One model × data × loop × input × mode: per-iteration seconds of each block."""

    model: str
    data: str
    flavour: str
    loop: str
    input: str
    mode: str
    number: int
    times_s: tuple[float, ...]
    warmup_s: tuple[float, ...] = ()
    error: str | None = None


RowKey = tuple[str, str, str, str]  # flavour, model, data, input


@dataclass(frozen=True)
class BenchResult(Renderable):
    cells: tuple[BenchCell, ...]
    settings: BenchSettings = field(default_factory=BenchSettings)
    environment: Environment = field(default_factory=Environment)
    created: str = ""
    schema_version: int = SCHEMA_VERSION

    def cell(self, key: RowKey, loop: str, mode: str) -> BenchCell | None:
        flavour, model, data, src = key
        for c in self.cells:
            if (c.flavour, c.model, c.data, c.input, c.loop, c.mode) == (
                flavour,
                model,
                data,
                src,
                loop,
                mode,
            ):
                return c
        return None

    def rows(self) -> list[RowKey]:
        keys: list[RowKey] = []
        for c in self.cells:
            key = (c.flavour, c.model, c.data, c.input)
            if key not in keys:
                keys.append(key)
        return keys

    def percent(self, a: BenchCell | None, b: BenchCell | None) -> float | None:
        """The seeds' signed percent of ``a`` against ``b`` (+ when ``a`` is faster)."""
        if a is None or b is None or a.error or b.error or not a.median_s or not b.median_s:
            return None
        return signed_percent(a.median_s, b.median_s)

    def gve(self, key: RowKey, loop: str) -> float | None:
        """Graph vs eager, the seeds' GvE: + when graph is faster."""
        return self.percent(self.cell(key, loop, "graph"), self.cell(key, loop, "eager"))

    def tob_vs_fit(self, key: RowKey, mode: str = "graph") -> float | None:
        """train_on_batch vs fit: + when train_on_batch is faster."""
        return self.percent(self.cell(key, "train_on_batch", mode), self.cell(key, "fit", mode))

    # -- output ----------------------------------------------------------------------

    def _render(self) -> RenderableType:
        from tfdiag.render.bench_console import render_bench

        return render_bench(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "kind": "bench",
            "tool": f"tfdiag {__version__}",
            "created": self.created,
            "settings": {
                k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self.settings).items()
            },
            "environment": {**asdict(self.environment), "devices": list(self.environment.devices)},
            "cells": [
                {
                    **{k: getattr(c, k) for k in ("model", "data", "flavour", "loop", "input")},
                    "mode": c.mode,
                    "median_s": c.median_s,
                    "iqr_s": c.iqr_s,
                    "noisy": c.noisy,
                    "gve_percent": self.gve((c.flavour, c.model, c.data, c.input), c.loop),
                    "error": c.error,
                    "number": c.number,
                    "times_s": list(c.times_s),
                    "warmup_s": list(c.warmup_s),
                }
                for c in self.cells
            ],
        }

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for c in self.cells:
            gve = self.gve((c.flavour, c.model, c.data, c.input), c.loop)
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

    def save(self, path: str | Path, *, overwrite: bool = False) -> tuple[Path, Path]:
        """Write ``<stem>.json`` and ``<stem>.csv`` as one atomic set; returns both paths."""
        json_path, csv_path = bench_paths(path)
        text = json.dumps(self.to_json(), indent=1, allow_nan=False)
        write_set(
            {json_path: text.encode("utf-8"), csv_path: self.to_csv().encode("utf-8")},
            overwrite=overwrite,
        )
        return json_path, csv_path


def bench_paths(path: str | Path) -> tuple[Path, Path]:
    """``bench.json`` / ``bench`` → (``bench.json``, ``bench.csv``)."""
    p = Path(path)
    stem = p.name[: -len(".json")] if p.name.endswith(".json") else p.name
    if not stem:
        raise InputError(f"{path}: not a usable file name")
    return p.with_name(stem + ".json"), p.with_name(stem + ".csv")


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def bench_from_json(doc: dict[str, Any]) -> BenchResult:
    """Rebuild a BenchResult from its JSON; derived fields are ignored."""
    if doc.get("kind") != "bench":
        raise InputError("not a bench result")
    s = dict(doc.get("settings", {}))
    cells = []
    for c in doc["cells"]:
        times = tuple(float(t) for t in c.get("times_s", ()))
        if any(not t > 0 for t in times):
            raise InputError("not a valid bench result (a time ≤ 0)")
        cells.append(
            BenchCell(
                model=str(c["model"]),
                data=str(c["data"]),
                flavour=str(c.get("flavour", "keras3")),
                loop=str(c["loop"]),
                input=str(c["input"]),
                mode=str(c["mode"]),
                number=int(c.get("number", 1)),
                times_s=times,
                warmup_s=tuple(float(t) for t in c.get("warmup_s", ())),
                error=None if c.get("error") is None else str(c["error"]),
            )
        )
    iterations = s.get("iterations")
    return BenchResult(
        cells=tuple(cells),
        settings=BenchSettings(
            models=tuple(str(m) for m in s.get("models", SIZES)),
            data=tuple(str(d) for d in s.get("data", SIZES)),
            flavours=tuple(str(f) for f in s.get("flavours", ("keras3",))),
            iterations=None if iterations is None else int(iterations),
            repeats=int(s.get("repeats", 5)),
            warmup=int(s.get("warmup", 1)),
        ),
        environment=Environment.from_json(doc.get("environment", {})),
        created=str(doc.get("created", "")),
    )
