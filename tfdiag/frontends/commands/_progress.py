"""A rich progress bar on stderr for long measurements (hidden when stderr is not a terminal)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int, str], None]]:
    """Yields ``on_step(done, total, label)``; the bar disappears when done."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[step]}", style="dim"),
    )
    console = Console(stderr=True)
    # Not a terminal (CI, a pipe): no bar at all, so stderr keeps only real messages.
    with Progress(
        *columns, console=console, transient=True, disable=not console.is_terminal
    ) as progress:
        task = progress.add_task(description, total=None, step="")

        def on_step(done: int, total: int, label: str) -> None:
            progress.update(task, completed=done, total=total, step=label)

        yield on_step
