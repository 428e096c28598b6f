"""A finding's "patch" block, under its fix: the figures line (``line 34: verified 41×
(1.21 s → 29 ms per call), outputs match``), what the edit does, and the unified diff line
by line; or the one line saying why there is no patch.

One block for every view that shows a patch (``tfdiag fix``, ``explain`` of a saved fix
result); the HTML page draws the same block as a copyable ``<pre>``
(:mod:`tfdiag.render.html.patch`). Every string is rendered as text, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Group
from rich.padding import Padding
from rich.text import Text

from tfdiag.records.patches import PatchRecord

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

_STYLES = {"+": "green", "-": "red", "@": "cyan"}


def diff_text(patch: str) -> Text:
    """A unified diff, coloured by line, every character shown as text."""
    out = Text()
    for line in patch.splitlines(keepends=True):
        style = "bold" if line.startswith(("diff ", "--- ", "+++ ")) else _STYLES.get(line[:1])
        out.append(line, style=style)
    return out


def head_style(p: PatchRecord) -> str:
    return "green" if p.offered else "yellow"


@dataclass(frozen=True)
class PatchBlock:
    """The block of one patch record, ``indent`` spaces in."""

    record: PatchRecord
    indent: int = 2

    def lines(self) -> Group:
        p = self.record
        if not p.patch:
            return Group(Text(p.headline(), style="dim"))
        return Group(
            Text.assemble(("patch ", "bold"), (p.headline(), head_style(p))),
            Text(p.summary, style="dim"),
            diff_text(p.patch),
        )

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Padding(self.lines(), (0, 0, 0, self.indent))
