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


def fmt_pct0(share: float) -> str:
    """A 0–1 share as a whole percent: ``12 %`` (evidence lines)."""
    return f"{100 * share:.0f} %"


def fmt_times(ratio: float) -> str:
    """A speed-up in prose: ``37×``, ``2.5×``."""
    return f"{ratio:.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def fmt_ratio(ratio: float | None) -> str:
    """A ratio in a table column: ``162×``, ``12.5×``, ``1.07×``, ``0.08×``; below 0.01 one
    over its inverse, ``1/538×`` (a 538× speed-up: not ``0.00×``, nor ``0.0019×`` to divide
    in one's head); ``–`` when unknown."""
    if ratio is None:
        return "–"
    if 0 < ratio < 0.01:
        return f"1/{1 / ratio:.0f}×"
    return f"{ratio:.0f}×" if ratio >= 100 else f"{ratio:.1f}×" if ratio >= 10 else f"{ratio:.2f}×"


def fmt_of_the_time(ratio: float | None) -> str:
    """A time ratio in prose: ``0.08× the time``, ``538× the time``; below 0.01
    ``1/538 of the time``."""
    if ratio is not None and 0 < ratio < 0.01:
        return f"1/{1 / ratio:.0f} of the time"
    return f"{fmt_ratio(ratio)} the time"


def fmt_signed_percent(percent: float | None) -> str:
    """The seeds' signed percent: ``+410 %``, ``-54 %``, ``–`` when unknown."""
    return "–" if percent is None else f"{percent:+,.0f} %"
