"""``show()`` and rich rendering for every tfdiag result, written once."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult


class Renderable:
    """A result that renders with rich: subclasses say how in :meth:`_render`."""

    def _render(self) -> RenderableType:
        raise NotImplementedError

    def show(self, console: Console | None = None, *, width: int | None = None) -> None:
        """Print the result with rich (terminal or notebook)."""
        if console is None:
            from rich.console import Console

            console = Console(width=width) if width else Console()
        console.print(self._render())

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._render()

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        """What Jupyter shows when a cell's value is the result: the same view, as HTML."""
        import io

        from rich.console import Console

        console = Console(file=io.StringIO(), record=True, width=110, force_jupyter=False)
        console.print(self._render())
        return {
            "text/plain": console.export_text(clear=False),
            "text/html": console.export_html(inline_styles=True),
        }
