"""Function names in narrow table columns: wrapped at name boundaries, never mid-word.

``trainer.py:TFEpochIterator.__init__`` is shown as ``trainer:TFEpochIterator.__init__`` and
breaks after the file (``trainer:``) and before a dot of the qualified name
(``TFEpochIterator`` / ``.__init__``); a part that fits no line breaks at its words (after
``_``, before a capital), and only a word that fits no line is folded. :class:`NameTable`
lays a table out at the width it is printed at and wraps its first column that way.
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

#: A name column is never made narrower than this.
MIN_WIDTH = 12
_QUAL_PART = re.compile(r"\.?[^.]+|\.")
_WORD = re.compile(r"(?<=_)(?=[^_])|(?<=[a-z0-9])(?=[A-Z])")


def name_parts(name: str) -> list[str]:
    """Where ``name`` may break: ``["trainer:", "TFEpochIterator", ".__init__"]`` (the
    file's ``.py`` dropped: the shortened module path)."""
    file, sep, qual = name.partition(":")
    if not sep or name.startswith("{"):
        file, qual = "", name
    file = file[:-3] if file.endswith(".py") else file
    parts = [file + ":"] if file else []
    return parts + (_QUAL_PART.findall(qual) or [qual])


def _words(part: str) -> list[str]:
    """A part too wide for its column, at its word boundaries: after ``_``, before a
    capital that follows a small letter (``StructuredFunction`` ``Wrapper``)."""
    return [w for w in _WORD.split(part) if w]


def wrap_name(name: str, width: int) -> str:
    """``name`` in lines of at most ``width`` cells: broken after the file and before a
    dot, a part that fits no line broken at its words, and only a word that fits no line
    folded."""
    width = max(width, 1)
    lines: list[str] = []
    line = ""

    def put(piece: str) -> None:
        nonlocal line
        if line and cell_len(line + piece) > width:
            lines.append(line)
            line = ""
        while cell_len(line + piece) > width:  # one word wider than the column: fold it
            cut = width - cell_len(line)
            lines.append(line + piece[:cut])
            line, piece = "", piece[cut:]
        line += piece

    for part in name_parts(name):
        if cell_len(part) <= width:
            put(part)
        else:
            for word in _words(part):
                put(word)
    lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class NameTable:
    """A table whose first column holds function names: ``make(width)`` builds it with
    the names wrapped to ``width`` (``None``: one line each). Printed, the names get
    what the other columns leave of the width, at least :data:`MIN_WIDTH`."""

    make: Callable[[int | None], Table]
    names: tuple[str, ...]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self.make(None)
        natural = Measurement.get(console, options.update_width(10_000), table).maximum
        over = natural - options.max_width
        if over <= 0 or not self.names:
            yield table
            return
        widest = max(cell_len(n) for n in self.names)
        yield self.make(max(widest - over, MIN_WIDTH))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.make(None))
