"""A one-line sparkline of iteration times, for the console header."""

from __future__ import annotations

from collections.abc import Sequence

BARS = "▁▂▃▄▅▆▇█"
#: Widest sparkline; longer series show the slowest iteration of each bin.
SPARK_WIDTH = 60


def sparkline(values: Sequence[float], width: int = SPARK_WIDTH) -> str:
    """``▁▁▂█▁▁``: one bar per value (or per bin's maximum), scaled from min to max."""
    if not values or width < 1:
        return ""
    n = len(values)
    if n > width:
        bins = [values[i * n // width : (i + 1) * n // width] for i in range(width)]
        values = [max(b) for b in bins]
    lo, hi = min(values), max(values)
    if hi <= lo:
        return BARS[0] * len(values)
    top = len(BARS) - 1
    return "".join(BARS[round((v - lo) / (hi - lo) * top)] for v in values)
