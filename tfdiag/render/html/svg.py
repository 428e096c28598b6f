"""The iteration timeline as inline SVG: the same marks as the PNG plot (warm-up band,
spikes, drift line, the median), drawn by hand because it is a polyline and a few
rectangles — no chart library for that.

A cold first iteration far above the rest would flatten the plot: it is clipped at the
top (a caret marks it) and its value is written in the legend under the plot, never over
the line.
"""

from __future__ import annotations

from html import escape

from tfdiag.analysis.timeline import ProgramTimeline
from tfdiag.records.text import clean

W, H = 760, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 12, 30


def _t(text: str) -> str:
    return escape(clean(text), quote=True)


def timeline_svg(pt: ProgramTimeline) -> str | None:
    """A ``<figure>``: the SVG plot and its legend as text; None without iteration times."""
    times, what, tl = pt.times, pt.what, pt.timeline
    if not times:
        return None
    ms = [t * 1e3 for t in times]
    top = max(ms) * 1.08 or 1.0
    clipped: list[int] = []
    if tl.warmup and len(ms) > tl.warmup.iterations:
        rest = max(ms[tl.warmup.iterations :]) * 1.25
        if max(ms[: tl.warmup.iterations]) > rest:
            top = rest
            clipped = [i for i in range(tl.warmup.iterations) if ms[i] > top]
    n = len(ms)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def x(i: float) -> float:
        return LEFT + (pw * (i / (n - 1)) if n > 1 else pw / 2)

    def y(v: float) -> float:
        return TOP + ph * (1 - min(v, top) / top)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" '
        f'width="{W}" height="{H}" role="img" aria-label="{_t(what)}">'
    ]
    for k in range(5):  # grid and y labels
        v = top * k / 4
        out.append(
            f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.3g}</text>'
        )
    out.append(
        f'<text x="12" y="{TOP + ph / 2:.0f}" transform="rotate(-90 12 {TOP + ph / 2:.0f})" '
        'text-anchor="middle">ms per iteration</text>'
    )
    legend: list[tuple[str, str]] = [("series", what)]
    if tl.warmup:
        w = tl.warmup.iterations
        x0, x1 = x(-0.5) if n > 1 else LEFT, x(w - 0.5) if n > 1 else W - RIGHT
        out.append(
            f'<rect class="warmup" x="{max(x0, LEFT):.1f}" y="{TOP}" '
            f'width="{max(x1 - max(x0, LEFT), 1):.1f}" height="{ph}"/>'
        )
        cold = "; ".join(f"#{i + 1}: {ms[i]:.1f} ms, off the scale" for i in clipped)
        legend.append(("warmup", f"warm-up ({w})" + (f" — {cold}" if cold else "")))
    if tl.median_s is not None:
        ym = y(tl.median_s * 1e3)
        out.append(
            f'<line class="median" x1="{LEFT}" x2="{W - RIGHT}" y1="{ym:.1f}" y2="{ym:.1f}"/>'
        )
        legend.append(("median", f"median {tl.median_s * 1e3:.3g} ms"))
    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(ms))
    out.append(f'<polyline class="series" points="{points}"/>')
    for i in clipped:
        out.append(f'<path class="clip" d="M{x(i) - 5:.1f},{TOP + 7} l5,-7 l5,7 z"/>')
    if tl.spikes:
        s = tl.spikes
        for i in s.indices:
            out.append(f'<circle class="spike" cx="{x(i):.1f}" cy="{y(ms[i]):.1f}" r="4"/>')
        every = f", every {s.period}" if s.period else ""
        legend.append(("spike", f"spikes ({len(s.indices)}{every})"))
    if tl.drift:
        d = tl.drift
        out.append(
            f'<line class="drift" x1="{x(d.first):.1f}" y1="{y(d.start_s * 1e3):.1f}" '
            f'x2="{x(d.last):.1f}" y2="{y(d.end_s * 1e3):.1f}"/>'
        )
        legend.append(("drift", f"drift {100 * d.change:+.0f} %"))
    for k in sorted({0, n - 1, *range(0, n, max(1, n // 10))}):  # x ticks
        out.append(f'<text x="{x(k):.1f}" y="{TOP + ph + 16}" text-anchor="middle">{k + 1}</text>')
    out.append("</svg>")
    keys = "".join(
        f'<span class="key"><i class="{cls}"></i>{_t(label)}</span>' for cls, label in legend
    )
    return f'<figure class="timeline">{"".join(out)}<figcaption>{keys}</figcaption></figure>'
