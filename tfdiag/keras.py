"""``tfdiag.keras.ProfileCallback``: profile training batches inside a real ``fit()``.

The callback lives in :mod:`tfdiag.capture.callback`, where ``tfdiag run`` drives it too
(a script's ``fit`` is diagnosed by the same callback the user would add by hand).
"""

from __future__ import annotations

from tfdiag.capture.callback import MAX_TIMED_BATCHES, ProfileCallback

__all__ = ["MAX_TIMED_BATCHES", "ProfileCallback"]
