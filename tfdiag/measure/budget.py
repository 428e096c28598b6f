"""Verification's time budget: what ``profile(verify_s=...)`` accepts, importable without
loading verification itself (``profile()`` loads :mod:`tfdiag.measure.verify` only when
``verify=True``)."""

from __future__ import annotations

from tfdiag.records.errors import InputError

#: The seconds ``verify=True`` may take by default.
DEFAULT_BUDGET_S = 60.0


def check_budget(verify_s: object) -> float:
    """``verify_s`` as seconds ≥ 0.

    Raises:
        InputError: not a number, negative, or not finite.
    """
    if isinstance(verify_s, bool) or not isinstance(verify_s, (int, float)):
        raise InputError(f"verify_s must be a number of seconds, got {verify_s!r}")
    if not 0 <= verify_s < 1e6:
        raise InputError(f"verify_s must be between 0 and 1e6 seconds, got {verify_s!r}")
    return float(verify_s)
