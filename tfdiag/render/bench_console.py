"""The bench grid as the seeds tabled it: seconds per iteration, and signed percentages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tfdiag.render.compare_console import fmt_percent

if TYPE_CHECKING:
    from tfdiag.compare.bench_result import BenchCell, BenchResult


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
    return Text(fmt_percent(value), style="green" if value > 0 else "red" if value < 0 else "")


def render_bench(result: BenchResult) -> RenderableType:
    s = result.settings
    flavours = len({c.flavour for c in result.cells}) > 1
    blocks = f"{s.iterations} iterations" if s.iterations else "the seeds' 200/100/50 iterations"
    table = Table(
        title=(
            "The seeds' grid — seconds per iteration (one batch of 32), median of "
            f"{s.repeats} interleaved blocks of {blocks}"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    if flavours:
        table.add_column("flavour")
    for col in ("model", "data", "input"):
        table.add_column(col)
    for col in ("fit graph", "fit eager", "GvE", "tob graph", "tob eager", "GvE", "tob vs fit"):
        table.add_column(col, justify="right", no_wrap=True)
    for key in result.rows():
        flavour, model, data, src = key
        cells = [
            result.cell(key, loop, mode)
            for loop in ("fit", "train_on_batch")
            for mode in ("graph", "eager")
        ]
        table.add_row(
            *([flavour] if flavours else []),
            model,
            data,
            src,
            _seconds(cells[0]),
            _seconds(cells[1]),
            _percent(result.gve(key, "fit")),
            _seconds(cells[2]),
            _seconds(cells[3]),
            _percent(result.gve(key, "train_on_batch")),
            _percent(result.tob_vs_fit(key)),
        )
    table.caption = (
        "% = (1 − longer/shorter) × 100, the seeds' signed percent: GvE + when graph is "
        "faster; tob vs fit (graph) + when train_on_batch is faster. "
        "! = IQR above 10 % of the median. tob = train_on_batch."
    )
    table.caption_justify = "left"
    parts: list[RenderableType] = [table]
    errors = [c for c in result.cells if c.error is not None]
    for c in errors:
        parts.append(
            Text.from_markup(
                f"[red]error[/] {escape(c.model)} model · {escape(c.data)} data · "
                f"{escape(c.loop)} · {escape(c.input)} · {escape(c.mode)}: {escape(c.error or '')}"
            )
        )
    env = result.environment
    stack = " · ".join(
        f"{n} {v}"
        for n, v in (
            ("TensorFlow", env.tensorflow),
            ("Keras", env.keras),
            ("tf_keras", env.tf_keras),
        )
        if v
    )
    if stack:
        parts.append(Text(f"{stack} · {env.cpu_count or '?'} CPUs · {env.platform}", style="dim"))
    return Group(*parts)
