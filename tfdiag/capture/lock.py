"""The profiler lock: one tfdiag profiler at a time per process, never over another one.

``profile()``, ``ProfileCallback`` and ``tfdiag run`` take it before they attach cProfile
(:meth:`ProfilerLock.try_acquire`) and give it back when they detach it.
"""

from __future__ import annotations

import sys
import threading


class ProfilerLock:
    """Held while a tfdiag driver has cProfile attached."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def try_acquire(self) -> str | None:
        """Take the lock without waiting: None when taken (the caller then releases it),
        else the one-line reason profiling cannot start now.

        Never over a profiler someone else attached (``python -m cProfile``, an IDE):
        enabling cProfile would silently replace it.
        """
        if not self._lock.acquire(blocking=False):
            return "tfdiag.profile() is already running in this process"
        if sys.getprofile() is not None:
            self._lock.release()
            return (
                "another profiler is attached (sys.getprofile() is set, e.g. by python -m cProfile "
                "or an IDE); tfdiag would replace it, so it does not start"
            )
        return None

    def release(self) -> None:
        """Give back the lock :meth:`try_acquire` took."""
        self._lock.release()


#: The process's one lock, shared by the three drivers.
PROFILER_LOCK = ProfilerLock()
