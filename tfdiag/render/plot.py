"""A PNG plot of a run's iteration times, with the timeline findings marked.

matplotlib is an optional extra (``pip install matplotlib``; the ``plot`` extra of tfdiag's
checkout); it is imported
here only, and only its object API (no pyplot), so a notebook's backend is left
as it was.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from tfdiag.records.errors import InputError
from tfdiag.render.safe import clean

if TYPE_CHECKING:
    from tfdiag.advise.diagnosis import Diagnosis


def _matplotlib() -> tuple[Any, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(
            "plotting needs matplotlib, which is not installed: pip install matplotlib"
        ) from None
    return Figure, FigureCanvasAgg


def timeline_png(diagnosis: Diagnosis) -> bytes:
    """The plot as PNG bytes.

    Raises:
        InputError: matplotlib is missing, or the report holds no iteration times.
    """
    figure_cls, canvas_cls = _matplotlib()
    pt = diagnosis.timeline
    times, what, timeline = pt.times, pt.what, pt.timeline
    if not times:
        raise InputError("this report holds no per-iteration times to plot")
    fig = figure_cls(figsize=(8, 3.4), dpi=100)
    canvas_cls(fig)
    ax = fig.add_subplot()
    xs = list(range(1, len(times) + 1))
    ms = [t * 1e3 for t in times]
    ax.plot(xs, ms, marker=".", linewidth=1, color="tab:blue", label=what)
    if timeline.median_s is not None:
        ax.axhline(timeline.median_s * 1e3, color="grey", linewidth=0.8, linestyle=":")
    if timeline.warmup:
        w = timeline.warmup.iterations
        top = max(ms[w:]) * 1.2 if len(ms) > w else 0.0
        clipped = [i for i in range(w) if top and ms[i] > top]
        # A cold first iteration would flatten the rest: clip it, mark it with a caret at the
        # top, and write its value in the legend (a label in the plot sat on the line).
        cold = "; ".join(f"#{i + 1} ↑ {ms[i]:.1f} ms" for i in clipped)
        label = f"warm-up ({w})" + (f": {cold}" if cold else "")
        ax.axvspan(0.5, w + 0.5, color="tab:orange", alpha=0.2, label=label)
        if clipped:
            ax.set_ylim(0, top)
            ax.scatter(
                [i + 1 for i in clipped],
                [top] * len(clipped),
                marker="^",
                color="tab:orange",
                clip_on=False,
                zorder=4,
            )
    if timeline.spikes:
        s = timeline.spikes
        every = f", every {s.period}" if s.period else ""
        ax.scatter(
            [i + 1 for i in s.indices],
            [ms[i] for i in s.indices],
            color="tab:red",
            zorder=3,
            label=f"spikes ({len(s.indices)}{every})",
        )
    if timeline.drift:
        d = timeline.drift
        ax.plot(
            [d.first + 1, d.last + 1],
            [d.start_s * 1e3, d.end_s * 1e3],
            linestyle="--",
            color="tab:purple",
            label=f"drift {100 * d.change:+.0f} %",
        )
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # iterations are whole numbers
    ax.set_xlabel("iteration")
    ax.set_ylabel("ms per iteration")
    # The label is data: no mathtext ($...$), no control characters.
    title = clean(f"tfdiag · {diagnosis.record.call.label}")
    ax.set_title(title, loc="left", fontsize="medium", parse_math=False)
    ax.set_ylim(bottom=0)  # keeps a top set by the warm-up clip
    ax.legend(fontsize="small", loc="upper right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
