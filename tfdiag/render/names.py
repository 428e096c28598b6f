"""Names in tables (functions, TF ops, call sites), never broken inside an identifier.

``trainer.py:TFEpochIterator.__init__`` is shown as ``trainer:TFEpochIterator.__init__``; a
name may break only after its file (``trainer:``) and before a dot of its qualified name
(``TFEpochIterator`` / ``.__init__``), an op's only after ``::`` or ``/``. :class:`NamedRows`
prints a table with one name per line where it fits, and else each row's figures on one line
with its name on the lines below.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.measure import Measurement
from rich.table import Table

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

_QUAL_PART = re.compile(r"\.?[^.]+|\.")


def name_parts(name: str) -> list[str]:
    """Where ``name`` may break: ``["trainer:", "TFEpochIterator", ".__init__"]`` (the
    file's ``.py`` dropped: the shortened module path)."""
    file, sep, qual = name.partition(":")
    if not sep or name.startswith("{"):
        file, qual = "", name
    file = file[:-3] if file.endswith(".py") else file
    parts = [file + ":"] if file else []
    return parts + (_QUAL_PART.findall(qual) or [qual])


_OP_PART = re.compile(r"[^:/]+(?:::|/)?|::|/")


def op_parts(name: str) -> list[str]:
    """Where a TF op name may break: after each ``::`` of a tf.data iterator path
    (``Iterator::Root::``, ``Prefetch::``…) and after each ``/`` of a graph op's scope."""
    return _OP_PART.findall(name) or [name]


def wrap_parts(parts: list[str], width: int) -> list[str]:
    """``parts`` joined into lines of at most ``width`` cells, broken only between parts (a
    part wider than a line gets a line of its own, whole)."""
    lines: list[str] = []
    line = ""
    for part in parts:
        if line and cell_len(line + part) > width:
            lines.append(line)
            line = ""
        line += part
    lines.append(line)
    return lines


@dataclass(frozen=True)
class NamedRows:
    """A table whose first column holds names (functions, ops, call sites). Where it fits
    the width it is printed as a table with each name on one line; where it does not, each
    row's figures come on one line and its name on the lines below it, broken only between
    the parts ``split`` gives (after a module, before a dot; after ``::``): a name never
    breaks inside an identifier, and no column is squeezed."""

    title: str
    name_header: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    right: frozenset[int] = frozenset()
    caption: str | None = None
    split: Callable[[str], list[str]] = name_parts

    def table(self) -> Table:
        from rich import box

        table = Table(title=self.title, title_justify="left", box=box.SIMPLE_HEAD, expand=True)
        table.add_column(self.name_header, no_wrap=True, ratio=1)
        for k, header in enumerate(self.headers):
            table.add_column(header, justify="right" if k in self.right else "left", no_wrap=True)
        for name, cells in self.rows:
            table.add_row("".join(self.split(name)), *cells)
        if self.caption:
            table.caption, table.caption_justify = self.caption, "left"
        return table

    def _stacked(self, width: int) -> RenderResult:
        from rich.text import Text

        columns = list(zip(*(cells for _, cells in self.rows))) or [() for _ in self.headers]
        widths = [
            max([cell_len(h), *(cell_len(part) for c in col for part in c.split("\n"))])
            for h, col in zip(self.headers, columns)
        ]

        def line(cells: tuple[str, ...] | list[str]) -> str:
            out = []
            for k, (cell, w) in enumerate(zip(cells, widths)):
                out.append(cell.rjust(w) if k in self.right else cell.ljust(w))
            return "  " + "  ".join(out).rstrip()

        yield Text(f"{self.title}; each {self.name_header}'s name below its row", style="italic")
        yield Text(line(list(self.headers)))
        yield Text("  " + "─" * max(min(width, sum(widths) + 2 * len(widths)) - 2, 1))
        for name, cells in self.rows:
            split = [cell.split("\n") for cell in cells]  # a cell may hold several lines
            for k in range(max((len(parts) for parts in split), default=1)):
                yield Text(line([parts[k] if k < len(parts) else "" for parts in split]))
            for part in wrap_parts(self.split(name), width - 6):
                yield Text("      " + part, style="dim")
        if self.caption:
            yield Text(self.caption)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self.table()
        natural = Measurement.get(console, options.update_width(10_000), table).maximum
        if natural <= options.max_width or not self.rows:
            yield table
            return
        yield from self._stacked(options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(40, options.max_width), options.max_width)
