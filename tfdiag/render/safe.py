"""Text read from a file is data: what every view does to it before a terminal, rich or a
browser sees it.

Applied by the format registry rather than field by field: :class:`Plain` renders a
console view with rich markup off and every control character stripped from what it
prints (:func:`tfdiag.records.text.clean`); :func:`json_for_script` makes JSON safe to
embed in an HTML ``<script>``. A renderer builds its own styled lines as ``Text`` objects
(:func:`labelled`), never as markup strings, so a ``[link=...]`` or ``[/]`` in a report is
printed as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

from tfdiag.records.text import UNSAFE, clean, json_for_script

__all__ = ["Plain", "clean", "json_for_script", "labelled"]

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult


@dataclass(frozen=True)
class Plain:
    """A console view rendered with markup and highlighting off, its text cleaned."""

    renderable: RenderableType

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        inner = options.update(markup=False, highlight=False)
        yield from _cleaned(console.render(self.renderable, inner))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options.update(markup=False), self.renderable)


def _cleaned(segments: Iterable[Segment]) -> Iterable[Segment]:
    for segment in segments:
        if segment.control or not UNSAFE.search(segment.text):
            yield segment
        else:
            yield Segment(clean(segment.text), segment.style)


def labelled(label: str, *parts: str | Text | tuple[str, str], width: int = 8) -> Text:
    """One header line, ``label`` in bold padded to ``width``, then ``parts`` as text
    (``(text, style)`` pairs styled): the way a view writes a line, never as markup."""
    return Text.assemble((label.ljust(width - 1), "bold"), " ", *parts)
