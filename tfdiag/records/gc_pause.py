"""The cyclic collector paused while a large table of acyclic tuples is built or read."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic collector paused while a large table of acyclic tuples is built: it would
    otherwise rescan the growing heap every few hundred thousand allocations (half the
    time of reading a 100k-function profile).

    What was built meanwhile then goes straight to the oldest generation (``freeze`` and
    ``unfreeze`` move the lists of objects, scanning nothing), where a collection would have
    moved it after scanning it: resuming costs nothing, not a scan of every new object."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.freeze()
            gc.unfreeze()
            gc.enable()
