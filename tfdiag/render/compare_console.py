"""The rich console view of a comparison: header, one table per kind, do/don't list."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tfdiag.records.units import fmt_pct0, fmt_ratio, fmt_s, fmt_signed_percent
from tfdiag.render.caps import shown_notes
from tfdiag.render.safe import labelled

if TYPE_CHECKING:
    from tfdiag.records.compare import CompareRecord, MethodResult

_KIND_TITLES = {"inference": "Inference", "training": "Training"}


@dataclass(frozen=True)
class Col:
    """One column of a :class:`Fitted` table.

    ``shrink`` holds ``(rank, floor)`` steps: at each step, in rank order across the table, the
    column wraps (at word boundaries) as narrow as the table needs, but no narrower than the
    floor. A column without steps keeps every cell on one line.
    """

    header: str
    cells: tuple[Text, ...]
    right: bool = False
    shrink: tuple[tuple[int, int], ...] = ()

    @property
    def natural(self) -> int:
        return max(_width(text) for text in (Text(self.header), *self.cells))


def _width(text: Text) -> int:
    return max(cell_len(line) for line in text.plain.split("\n"))


def header_floor(header: str, cells: Iterable[Text]) -> int:
    """A floor that wraps only the header: its longest word, or the widest cell."""
    return max(max(cell_len(word) for word in header.split()), *(_width(c) for c in cells))


@dataclass(frozen=True)
class Fitted:
    """A table laid out for the width it is printed at, never cutting a cell with "…".

    The layouts are tried in order, with two spaces between columns and then with one; in
    each, the columns shrink by their steps until the table fits. The first that fits is
    printed, else the narrowest (rich then folds what does not fit). Title and caption wrap.
    """

    layouts: tuple[tuple[Col, ...], ...]
    title: Text
    caption: Text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = None
        for gap in (2, 1):
            for cols in self.layouts:
                table, fits = self._fit(console, options, cols, gap)
                if fits:
                    yield table
                    return
        if table is not None:
            yield table

    def full_table(self) -> Table:
        """The widest layout, nothing wrapped (for a page, where the browser lays it out)."""
        return self._table(self.layouts[0], [None] * len(self.layouts[0]), 2)

    def _fit(
        self, console: Console, options: ConsoleOptions, cols: tuple[Col, ...], gap: int
    ) -> tuple[Table, bool]:
        widths: list[int | None] = [None] * len(cols)
        table = self._table(cols, widths, gap)
        wide = options.update_width(10_000)
        steps = sorted((rank, i, floor) for i, c in enumerate(cols) for rank, floor in c.shrink)
        for _, i, floor in steps:
            over = Measurement.get(console, wide, table).maximum - options.max_width
            if over <= 0:
                break
            now = widths[i] or cols[i].natural
            widths[i] = min(now, max(floor, now - over))
            table = self._table(cols, widths, gap)
        return table, Measurement.get(console, wide, table).maximum <= options.max_width

    def _table(self, cols: tuple[Col, ...], widths: list[int | None], gap: int) -> Table:
        table = Table(
            title=self.title,
            title_justify="left",
            caption=self.caption,
            caption_justify="left",
            box=box.SIMPLE_HEAD,
            collapse_padding=True,
            pad_edge=False,
            show_edge=False,
            padding=(0, gap - 1),
        )
        for col, width in zip(cols, widths):
            table.add_column(
                col.header,
                justify="right" if col.right else "left",
                no_wrap=width is None,
                width=width,
                overflow="fold",
            )
        for row in zip(*(c.cells for c in cols)):
            table.add_row(*row)
        return table


def _header(result: CompareRecord) -> Panel:
    env, s = result.environment, result.settings
    lines = [_line("model", f"{result.model} ({result.flavour})")]
    if result.data:
        lines.append(_line("data", " · ".join(f"{k}: {v}" for k, v in result.data)))
    versions = [*env.stack(), *env.machine()]
    lines.append(_line("stack", " · ".join(versions)))
    lines.append(
        _line(
            "measured",
            f"{s.warmup} warm-up call(s) per method, then {s.repeats} interleaved blocks of "
            f"≥ {fmt_s(s.min_block_s)}; median and IQR of the time per call",
        )
    )
    lines.append(
        _line(
            "checked",
            f"outputs against the baseline's (rtol {s.rtol:g}, atol {s.atol:g}); training loss "
            f"must not rise > {fmt_pct0(s.loss_rise)}",
        )
    )
    return Panel(
        Text("\n").join(lines), title="tfdiag · compare", title_align="left", box=box.ROUNDED
    )


def _line(label: str, text: str) -> Text:
    return labelled(label, text, width=9)


def _status(result: CompareRecord, m: MethodResult) -> Text:
    if m.error is not None:
        return Text("error", style="red")
    if m.mismatch is not None:
        return Text("mismatch", style="red")
    rec = result.recommendation(m.kind)
    if rec is not None and rec.method is m:
        return Text("★ best", style="bold green")
    if result.baseline(m.kind) is m:
        return Text("baseline", style="bold")
    return Text("ok", style="green")


def _iqr(m: MethodResult) -> Text:
    text = Text(fmt_s(m.iqr_s))
    if m.noisy:
        text.append(" !", style="yellow")
    return text


def _loss(m: MethodResult) -> str:
    if m.loss_before is None:
        return "–"
    after = "–" if m.loss_after is None else f"{m.loss_after:.3f}"
    return f"{m.loss_before:.3f} → {after}"


def _method_columns(result: CompareRecord, kind: str, stacked: bool) -> tuple[Col, ...]:
    """The table's columns; ``stacked`` puts each status under its method name (narrow consoles).

    As the console narrows: the method names wrap (first down to 16 columns), then the long
    headers, then the method names down to their longest word, then the losses and the IQRs.
    """
    methods = sorted(
        result.of_kind(kind),
        key=lambda m: (m.median_s is None or m.problem is not None, m.median_s or 0.0),
    )
    rec = result.recommendation(kind)
    base = result.baseline(kind)
    vs = f"vs {base.name if base is not None else 'baseline'}"
    bold = [rec is not None and rec.method is m for m in methods]
    names = [Text(m.name, style="bold" if b else "") for m, b in zip(methods, bold)]
    statuses = [_status(result, m) for m in methods]
    word = max(cell_len(w) for m in methods for w in m.name.split())
    if stacked:
        names = [Text.assemble(name, "\n", status) for name, status in zip(names, statuses)]
        word = max(word, *(status.cell_len for status in statuses))
    cols = [Col("method", tuple(names), shrink=((0, max(word, 16)), (3, word)))]
    if not stacked:
        cols.append(Col("status", tuple(statuses)))
    cols.append(Col("median", tuple(Text(fmt_s(m.median_s)) for m in methods), right=True))
    iqr_floor = max(cell_len(fmt_s(m.iqr_s)) for m in methods)
    cols.append(Col("IQR", tuple(_iqr(m) for m in methods), right=True, shrink=((5, iqr_floor),)))
    cols.append(Col("first", tuple(Text(fmt_s(m.first_call_s)) for m in methods), right=True))
    for rank, header, cells in (
        (1, "× fastest", [fmt_ratio(result.ratio_to_fastest(m)) for m in methods]),
        (2, vs, [fmt_ratio(result.speedup_vs_baseline(m)) for m in methods]),
        (2, "seeds' %", [fmt_signed_percent(result.percent_vs_baseline(m)) for m in methods]),
    ):
        texts = tuple(Text(c) for c in cells)
        cols.append(Col(header, texts, right=True, shrink=((rank, header_floor(header, texts)),)))
    if kind == "training":
        losses = tuple(Text(_loss(m)) for m in methods)
        loss_floor = max(cell_len(t.plain.split(" → ")[0]) + 2 for t in losses)
        cols.append(Col("loss", losses, shrink=((4, loss_floor),)))
    return tuple(cols)


def _table(result: CompareRecord, kind: str) -> Fitted:
    base = result.baseline(kind)
    base_name = base.name if base is not None else "baseline"
    unit = "all of x" if kind == "inference" else "one pass over x and y"
    training = kind == "training"
    return Fitted(
        layouts=(_method_columns(result, kind, False), _method_columns(result, kind, True)),
        title=Text(
            f"{_KIND_TITLES.get(kind, kind)} — time per call ({unit}, "
            f"batch size {result.settings.batch_size})"
        ),
        caption=Text(
            f"vs {base_name} = its median / this median; seeds' % = (1 − longer/shorter) "
            f"× 100, + when faster than {base_name}; ! = IQR above 10 % of the median; first = "
            "the cold first call (tracing, building)"
            + ("; loss on x, y before → after the method's calls" if training else "")
        ),
    )


def _problems(result: CompareRecord, kind: str) -> list[Text]:
    return [
        Text.assemble(
            (f"  {'error' if m.error else 'mismatch'} ", "red"), (m.name, "bold"), f": {m.problem}"
        )
        for m in result.of_kind(kind)
        if m.problem is not None
    ]


def _advice(result: CompareRecord) -> RenderableType:
    do, dont = result.advice()
    grid = Table.grid(padding=(0, 1))  # a wrapped line hangs under its own text
    grid.add_column(no_wrap=True)
    grid.add_column()
    for mark, style, lines in (("  ✓", "green", do), ("  ✗", "red", dont)):
        for line in lines:
            grid.add_row(Text(mark, style=style), Text(line))
    return Group(Text("For this model and data", style="bold"), grid)


def render_compare(result: CompareRecord) -> RenderableType:
    """The whole comparison as one renderable."""
    parts: list[RenderableType] = [_header(result)]
    for kind in result.kinds:
        parts += [Text(), _table(result, kind), *_problems(result, kind)]
    noisy = [m for m in result.methods if m.noisy]
    if noisy:
        parts.append(
            Text(
                f"noise: {len(noisy)} of {len(result.methods)} methods vary by more than 10 % "
                "between blocks (marked !); before trusting a small difference, rerun with more "
                "repeats on a quieter machine.",
                style="yellow",
            )
        )
    parts += [Text(), _advice(result)]
    if result.notes:
        parts.append(Text("\n".join(f"note: {n}" for n in shown_notes(result.notes)), style="dim"))
    return Group(*parts)
