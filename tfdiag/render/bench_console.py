"""The bench grid as the seeds tabled it: seconds per iteration, and signed percentages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from tfdiag.records.units import fmt_signed_percent
from tfdiag.render.compare_console import Col, Fitted, header_floor

if TYPE_CHECKING:
    from tfdiag.records.bench import BenchCell, BenchRecord


def _seconds(cell: BenchCell | None) -> Text:
    if cell is None:
        return Text("–")
    if cell.error is not None or cell.median_s is None:
        return Text("error", style="red")
    text = Text(f"{cell.median_s:.4f}")
    if cell.noisy:
        text.append(" !", style="yellow")
    return text


def _percent(value: float | None) -> Text:
    if value is None:
        return Text("–")
    return Text(
        fmt_signed_percent(value), style="green" if value > 0 else "red" if value < 0 else ""
    )


def _columns(result: BenchRecord, stacked: bool) -> tuple[Col, ...]:
    """The grid's columns; ``stacked`` puts the Keras flavour under the model (narrow consoles)."""
    keys = result.rows()
    flavours = len({c.flavour for c in result.cells}) > 1
    cols: list[Col] = []
    if flavours and not stacked:
        cols.append(Col("flavour", tuple(Text(k[0]) for k in keys)))
    models = [Text(f"{k[1]}\n{k[0]}" if flavours and stacked else k[1]) for k in keys]
    cols += [
        Col("model", tuple(models)),
        Col("data", tuple(Text(k[2]) for k in keys)),
        Col("input", tuple(Text(k[3]) for k in keys)),
    ]
    for loop, short in (("fit", "fit"), ("train_on_batch", "tob")):
        for mode in ("graph", "eager"):
            cells = tuple(_seconds(result.cell(k, loop, mode)) for k in keys)
            header = f"{short} {mode}"
            cols.append(Col(header, cells, right=True, shrink=((0, header_floor(header, cells)),)))
        cells = tuple(_percent(result.gve(k, loop)) for k in keys)
        cols.append(Col("GvE", cells, right=True))
    cells = tuple(_percent(result.tob_vs_fit(k)) for k in keys)
    cols.append(
        Col("tob vs fit", cells, right=True, shrink=((0, header_floor("tob vs fit", cells)),))
    )
    return tuple(cols)


def render_bench(result: BenchRecord) -> RenderableType:
    s = result.settings
    blocks = f"{s.iterations} iterations" if s.iterations else "the seeds' 200/100/50 iterations"
    table = Fitted(
        layouts=(_columns(result, False), _columns(result, True)),
        title=Text(
            "The seeds' grid — seconds per iteration (one batch of 32), median of "
            f"{s.repeats} interleaved blocks of {blocks}"
        ),
        caption=Text(
            "% = (1 − longer/shorter) × 100, the seeds' signed percent: GvE + when graph is "
            "faster; tob vs fit (graph) + when train_on_batch is faster. "
            "! = IQR above 10 % of the median. tob = train_on_batch."
        ),
    )
    parts: list[RenderableType] = [table]
    errors = [c for c in result.cells if c.error is not None]
    flavours = len({c.flavour for c in result.cells}) > 1
    for c in errors:
        flavour = f"{c.flavour} · " if flavours else ""
        parts.append(
            Text.assemble(
                ("error", "red"),
                f" {flavour}{c.model} model · {c.data} data · {c.loop} · {c.input} · "
                f"{c.mode}: {c.error or ''}",
            )
        )
    env = result.environment
    stack = " · ".join(env.stack())
    if stack:
        parts.append(Text(f"{stack} · {env.cpu_count or '?'} CPUs · {env.platform}", style="dim"))
    return Group(*parts)
