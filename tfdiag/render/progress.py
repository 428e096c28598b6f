"""A transient rich progress bar on stderr for long work: ``profile()``, ``compare()``, ``bench``.

Shown only where someone watches: stderr is a terminal, or a Jupyter notebook with
``ipywidgets`` (rich draws there through a widget); nothing at all otherwise (CI, a pipe, a
log file), and nothing with ``progress=False`` or ``TFDIAG_PROGRESS=0``.

The measuring code gets a plain callback, ``on_step(done, total, label)``, and calls it
between two timed calls, never inside one (docs/workflows.md). The bar draws only when the
callback is called — no refresh thread runs while the user's call is timed — and at most
every :data:`REFRESH_S`; a call that does not draw costs a few microseconds.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tfdiag.records.clock import Progress

#: ``TFDIAG_PROGRESS=0`` (or ``false``, ``no``, ``off``) turns every bar off.
ENV = "TFDIAG_PROGRESS"
#: The bar is redrawn at most this often (and on the last step).
REFRESH_S = 0.1


def wanted(progress: bool = True) -> bool:
    """``progress`` unless ``TFDIAG_PROGRESS`` says off."""
    off = os.environ.get(ENV, "").strip().lower() in ("0", "false", "no", "off")
    return bool(progress) and not off


def watched(console: Any) -> bool:
    """A terminal, or a notebook that can show rich's live widget."""
    if console.is_terminal:
        return True
    return bool(console.is_jupyter) and importlib.util.find_spec("ipywidgets") is not None


def _console() -> Any:
    """rich's console on stderr: it tells a terminal and a notebook from a pipe."""
    from rich.console import Console

    return Console(stderr=True)


def first_line(text: str, *, console: Any = None) -> None:
    """``text`` on stderr at once, where a bar would show (a terminal, a notebook): what
    long work is doing before its first bar; nothing on a pipe or a log."""
    if not wanted():
        return
    console = console if console is not None else _console()
    if watched(console):
        console.print(text, markup=False, highlight=False)


@contextmanager
def progress_bar(
    description: str, *, enabled: bool = True, console: Any = None
) -> Iterator[Progress | None]:
    """Yields ``on_step(done, total, label)``, or None when no bar is shown (so the
    measuring code skips the calls); the bar disappears when the block ends."""
    if not wanted(enabled):
        yield None
        return
    console = console if console is not None else _console()
    if not watched(console):
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as Bar

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[step]}", style="dim"),
    )
    with Bar(*columns, console=console, transient=True, auto_refresh=False) as bar:
        task = bar.add_task(description, total=None, step="")
        drawn = [-REFRESH_S]

        def on_step(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, step=label)
            now = time.monotonic()
            if now - drawn[0] >= REFRESH_S or done >= total:
                drawn[0] = now
                bar.refresh()

        yield on_step
