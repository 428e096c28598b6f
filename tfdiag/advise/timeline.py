"""The timeline detectors: ``warmup``, ``spikes`` and ``drift``, from the iteration times.

Each reads the run's timeline (:class:`~tfdiag.analysis.timeline.ProgramTimeline`, read once
per diagnosis: ``ctx.timeline``) and returns the evidence, or None. Impact is the
share of the timed iterations' time the fix can remove. The fix texts are in
:mod:`tfdiag.advise.table`.
"""

from __future__ import annotations

from collections.abc import Sequence

from tfdiag.advise.finding import Context, Detection
from tfdiag.records.units import fmt_pct0, fmt_s


def _positions(indices: Sequence[int], limit: int = 8) -> str:
    shown = ", ".join(str(i + 1) for i in indices[:limit])
    return shown + (f", … ({len(indices)} in all)" if len(indices) > limit else "")


def warmup(ctx: Context) -> Detection | None:
    pt = ctx.timeline
    timeline, what = pt.timeline, pt.what
    w = timeline.warmup
    if w is None:
        return None
    head = ", ".join(fmt_s(t) for t in w.times_s[:5]) + (", …" if w.iterations > 5 else "")
    evidence = (
        f"the first {w.iterations} of {timeline.n} {what} are slower than the steady state: "
        f"{head} vs a steady median of {fmt_s(w.steady_median_s)}",
        f"warm-up excess: {fmt_s(w.excess_s)}, {fmt_pct0(w.share)} of the series' time",
    )
    return Detection(w.share, evidence, values={"iterations": w.iterations})


def spikes(ctx: Context) -> Detection | None:
    pt = ctx.timeline
    timeline, what = pt.timeline, pt.what
    s = timeline.spikes
    if s is None:
        return None
    count = len(s.indices)
    pattern = f"every {s.period} iterations" if s.period else "at irregular intervals"
    evidence = (
        f"{count} spike(s) among {timeline.n} {what}, {pattern}: at iteration "
        f"{_positions(s.indices)}",
        f"a spike takes {s.size:.1f}× the expected {fmt_s(s.expected_s)} "
        f"(worst {fmt_s(s.max_s)}); spikes cost {fmt_s(s.excess_s)}, "
        f"{fmt_pct0(s.share)} of the series' time",
    )
    variant = "periodic" if s.period else "irregular"
    return Detection(s.share, evidence, variant=variant, values={"period": s.period})


def drift(ctx: Context) -> Detection | None:
    pt = ctx.timeline
    timeline, what = pt.timeline, pt.what
    d = timeline.drift
    if d is None:
        return None
    rising = d.change > 0
    evidence = (
        f"iterations {d.first + 1}–{d.last + 1} of the {what} go from "
        f"{fmt_s(d.start_s)} to {fmt_s(d.end_s)}: {100 * d.change:+.0f} % over the run "
        f"(Theil–Sen slope {fmt_s(abs(d.slope_s))} per iteration "
        f"{'slower' if rising else 'faster'}; Mann–Kendall z = {d.z:+.1f})",
    )
    gpu = any("GPU" in device for device in ctx.record.environment.devices)
    variant = ("rising-gpu" if gpu else "rising") if rising else "falling"
    return Detection(d.share, evidence, variant=variant)
