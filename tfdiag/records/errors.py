"""The errors tfdiag raises on purpose. Each message is one line a user can act on."""

from __future__ import annotations


class TfdiagError(Exception):
    """Base class for every error tfdiag raises itself."""


class InputError(TfdiagError, ValueError):
    """Bad input from the user: a path, a file, an argument. The CLI exits 2 on it."""


class ProfilerBusyError(TfdiagError, RuntimeError):
    """``profile()`` was called while another ``profile()`` is running in this process."""


class ProbeError(TfdiagError):
    """An optional probe could not run; the report gets a note and the other probes go on."""
