"""Number formatting shared by the renderers and the advice text (no rich, no TF)."""

from __future__ import annotations


def fmt_s(seconds: float | None) -> str:
    """Seconds with a unit that keeps three significant digits: ``2.50 s``, ``12.3 ms``."""
    if seconds is None:
        return "–"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def fmt_pct(share: float) -> str:
    """A 0–1 share as ``12.3 %``."""
    return f"{100 * share:.1f} %"
