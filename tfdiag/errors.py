"""The errors tfdiag raises on purpose. Each message is one line a user can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfdiag.report import Report


class TfdiagError(Exception):
    """Base class for every error tfdiag raises itself."""


class InputError(TfdiagError, ValueError):
    """Bad input from the user: a path, a file, an argument. The CLI exits 2 on it."""


class ProfilerBusyError(TfdiagError, RuntimeError):
    """``profile()`` was called while another ``profile()`` is running in this process."""


class ProbeError(TfdiagError):
    """An optional probe could not run; the report gets a note and the other probes go on."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during ``profile()``: the profilers are detached and, when at least the cold
    call finished, ``report`` holds what was measured so far (``report.partial`` is true).

    A subclass of KeyboardInterrupt, so a script that does not catch it still stops.
    """

    def __init__(self, message: str, report: Report | None = None) -> None:
        super().__init__(message)
        self.report = report
