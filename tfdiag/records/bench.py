"""The bench grid's record: raw block times per cell, the seeds' percentages derived.

Saved as JSON (``"kind": "bench"``, read back by ``explain``) and as CSV, one row
per cell, for a spreadsheet like the seeds' own (:mod:`tfdiag.render.bench_files`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from tfdiag.records.errors import InputError
from tfdiag.records.fields import MAX_SECONDS, Obj
from tfdiag.records.numbers import TimedBlocks, signed_percent
from tfdiag.records.report import SCHEMA_VERSION, Environment

BATCH, CHANNELS = 32, 30
#: Sequence length of the seeds' small/medium/large data.
LENGTHS = {"small": 140, "medium": 1400, "large": 14000}
SIZES = tuple(LENGTHS)
#: Iterations per timed block in the seeds' code, per model size.
SEED_ITERATIONS = {"small": 200, "medium": 100, "large": 50}


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
class BenchRecord:
    """The grid's cells (:class:`tfdiag.measure.BenchResult` adds the output formats)."""

    cells: tuple[BenchCell, ...]
    settings: BenchSettings = field(default_factory=BenchSettings)
    environment: Environment = field(default_factory=Environment)
    created: str = ""
    schema_version: int = SCHEMA_VERSION

    kind: ClassVar[str] = "bench"

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


def bench_paths(path: str | Path) -> tuple[Path, Path]:
    """``bench.json`` / ``bench`` → (``bench.json``, ``bench.csv``)."""
    p = Path(path)
    stem = p.name[: -len(".json")] if p.name.endswith(".json") else p.name
    if not stem:
        raise InputError(f"{path}: not a usable file name")
    return p.with_name(stem + ".json"), p.with_name(stem + ".csv")


B = TypeVar("B", bound=BenchRecord)


def bench_from_json(doc: dict[str, Any], cls: type[B]) -> B:
    """Rebuild a BenchResult from its JSON; derived fields are ignored.

    Raises:
        InputError: a part is missing, of the wrong type or out of range.
    """
    if doc.get("kind") != "bench":
        raise InputError("not a bench result")
    d = Obj(doc, "")
    s = Obj(doc.get("settings", {}), "settings")
    cells = []
    for i, raw in enumerate(d.items("cells")):
        c = Obj(raw, f"cells[{i}]")
        times = c.series("times_s", lo=-MAX_SECONDS)
        if any(not t > 0 for t in times):
            raise InputError("not a valid bench result (a time ≤ 0)")
        cells.append(
            BenchCell(
                model=c.text("model"),
                data=c.text("data"),
                flavour=c.text("flavour", "keras3"),
                loop=c.text("loop"),
                input=c.text("input"),
                mode=c.text("mode"),
                number=c.count("number", 1, hi=10**12),
                times_s=times,
                warmup_s=c.series("warmup_s"),
                error=c.opt_text("error"),
            )
        )
    return cls(
        cells=tuple(cells),
        settings=BenchSettings(
            models=s.texts("models") if "models" in s.doc else SIZES,
            data=s.texts("data") if "data" in s.doc else SIZES,
            flavours=s.texts("flavours") if "flavours" in s.doc else ("keras3",),
            iterations=s.opt_count("iterations", lo=1, hi=10**9),
            repeats=s.count("repeats", 5, lo=1, hi=10**6),
            warmup=s.count("warmup", 1, hi=10**6),
        ),
        environment=Environment.from_json(doc.get("environment")),
        created=d.text("created", ""),
    )
