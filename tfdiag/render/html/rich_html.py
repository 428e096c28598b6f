"""The console views' rich renderables as HTML: the same tables and lines, so the page
and the terminal never disagree about a number and no view is written twice.

Tables, groups, panels and text become ``<table>``, sections and paragraphs; anything
else is rendered by rich itself to text and embedded as a ``<pre>`` (escaped).
"""

from __future__ import annotations

import io

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tfdiag.render.compare_console import Fitted
from tfdiag.render.html.page import e
from tfdiag.render.html.patch import patch_html
from tfdiag.render.names import NamedRows
from tfdiag.render.patch_block import PatchBlock


def _plain(cell: object) -> str:
    if isinstance(cell, Text):
        return cell.plain
    return str(cell) if cell is not None else ""


def table_html(table: Table) -> str:
    # A table scrolls inside its own box: a wide one never widens the page (760 px laptops).
    out = ['<div class="scroll"><table>']
    if table.caption:
        out.append(f"<caption>{e(_plain(table.caption))}</caption>")
    out.append("<thead><tr>")
    out += [f"<th>{e(_plain(c.header))}</th>" for c in table.columns]
    out.append("</tr></thead><tbody>")
    columns = [list(c.cells) for c in table.columns]
    names = [i == 0 and c.overflow == "fold" for i, c in enumerate(table.columns)]
    for r in range(table.row_count):
        cells = []
        for c, col in enumerate(columns):
            text = _plain(col[r]) if r < len(col) else ""
            cls = ' class="name"' if names[c] else ""
            cells.append(f"<td{cls}>{e(text)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    title = f"<h3>{e(_plain(table.title))}</h3>" if table.title else ""
    return title + "".join(out)


def _fallback(renderable: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=110, color_system=None, record=True)
    console.print(renderable, markup=False, highlight=False)
    return f"<pre>{e(console.export_text())}</pre>"


def to_html(renderable: RenderableType) -> str:
    """``renderable`` (a console view or a part of one) as HTML."""
    if isinstance(renderable, Group):
        return "".join(to_html(r) for r in renderable.renderables)
    if isinstance(renderable, Table):
        return table_html(renderable)
    if isinstance(renderable, Fitted):
        return table_html(renderable.full_table())
    if isinstance(renderable, NamedRows):  # a page has no width: one name per row
        return table_html(renderable.table())
    if isinstance(renderable, Panel):
        title = f"<h3>{e(_plain(renderable.title))}</h3>" if renderable.title else ""
        return f'<section class="panel">{title}{to_html(renderable.renderable)}</section>'
    if isinstance(renderable, PatchBlock):
        return patch_html(renderable)
    if isinstance(renderable, Padding):
        return to_html(renderable.renderable)
    if isinstance(renderable, (Text, str)):
        text = _plain(renderable)
        return f'<pre class="text">{e(text)}</pre>' if text.strip() else ""
    return _fallback(renderable)
