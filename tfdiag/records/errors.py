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


class TfdiagWarning(UserWarning):
    """Something tfdiag left alone and says so; the CLI prints it as one ``warning:`` line."""


class SaveJournalWarning(TfdiagWarning):
    """A save lock or journal beside a report that tfdiag will not act on (it names a path
    outside its set, a live process, another user's file...): left as it is."""
