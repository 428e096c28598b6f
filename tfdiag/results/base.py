"""What every public result can do — show, render, save, display in a notebook — through
the format registry (:mod:`tfdiag.render.formats`), written once."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tfdiag.records.files import Content, write_set

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult


class Result:
    """A result that renders through the format registry; ``kind`` picks its formats."""

    kind: ClassVar[str]

    def view(self, brief: bool = False) -> RenderableType:
        """The console view (a rich renderable); ``brief``: the findings only."""
        from tfdiag.render.formats import view

        return view(self, brief)

    def show(
        self, console: Console | None = None, *, width: int | None = None, brief: bool = False
    ) -> None:
        """Print the result with rich (terminal or notebook): the answer first, then how it
        was measured; ``brief=True``: the findings only."""
        if console is None:
            from rich.console import Console

            console = Console(width=width) if width else Console()
        console.print(self.view(brief))

    def render(
        self, format: str = "text", *, width: int | None = None, brief: bool = False
    ) -> str | bytes:
        """The result in one of its formats (``text``, ``json``, ... see ``tfdiag formats``);
        ``brief`` applies to ``text``."""
        from tfdiag.render.formats import write

        return write(self, format, width=width, brief=brief)

    def to_html(self) -> str:
        """One self-contained HTML page of the result (scripts and styles inline, offline);
        ``save("run.html")`` writes the same page."""
        page = self.render("html")
        assert isinstance(page, str)
        return page

    def to_json(self) -> dict[str, Any]:
        """The JSON document: raw records plus the derived views."""
        from tfdiag.render.formats import document

        return document(self)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.view()

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        """What Jupyter shows when a cell's value is the result: the same view, as HTML."""
        from rich.console import Console

        console = Console(file=io.StringIO(), record=True, width=110, force_jupyter=False)
        console.print(self.view())
        return {
            "text/plain": console.export_text(clear=False),
            "text/html": console.export_html(inline_styles=True),
        }

    # -- saving ----------------------------------------------------------------------

    def _files(self, path: Path) -> dict[Path, Content]:
        """What ``save(path)`` writes: the one format the path's suffix names, else the
        kind's default set (:meth:`_default_files`)."""
        from tfdiag.render.formats import Options, format_for_path

        fmt = format_for_path(self.kind, path)
        if fmt is None or fmt.name == "json":
            return self._default_files(path)
        data = fmt.write(self, Options())
        return {path: data if isinstance(data, bytes) else data.encode("utf-8")}

    def _default_files(self, path: Path) -> dict[Path, Content]:
        raise NotImplementedError

    def _write(self, path: str | Path, *, overwrite: bool) -> tuple[Path, ...]:
        files = self._files(Path(path))
        write_set(files, overwrite=overwrite)
        return tuple(files)


def encoded(files: Mapping[Path, str | bytes | Content]) -> dict[Path, Content]:
    """Text members as UTF-8; bytes and folders as they are."""
    return {p: d.encode("utf-8") if isinstance(d, str) else d for p, d in files.items()}
