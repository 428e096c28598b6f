"""Time: the injectable clock every probe reads, and the timestamp a result records.

A ``Clock`` is any function returning seconds as a float (``time.perf_counter`` in a
real run, a fake one in tests that must assert exact times).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

Clock = Callable[[], float]
#: ``on_step(done, total, label)``: called between two measured calls, never inside one
#: (how a progress bar hears of long work; tfdiag/render/progress.py).
Progress = Callable[[int, int, str], None]


def now_iso() -> str:
    """The current UTC time, to the second, as results record it (``created``)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def epoch_of(created: str) -> float:
    """``created`` back as seconds since the epoch (0.0 when it is not a timestamp)."""
    try:
        return datetime.fromisoformat(created).timestamp()
    except ValueError:
        return 0.0
