"""The timeline findings' numbers and fixes: ``warmup``, ``spikes`` and ``drift``.

Each function reads a run's :class:`~tfdiag.report.Timing` and returns
``(impact, evidence, fix)`` or None; :mod:`tfdiag.advise` turns that into a
finding. Impact is the share of the timed iterations' time the fix can remove.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tfdiag.timeline import MIN_POINTS, Timeline, analyze_timeline
from tfdiag.units import fmt_s

if TYPE_CHECKING:
    from tfdiag.report import Timing

Advice = tuple[float, tuple[str, ...], str]


def timeline_series(timing: Timing) -> tuple[tuple[float, ...], str]:
    """The series to read: the unprofiled iterations, else the profiled ones."""
    if len(timing.iteration_s) >= MIN_POINTS or not timing.profiled_iteration_s:
        return timing.iteration_s, "timed iterations (no profiler attached)"
    return timing.profiled_iteration_s, "profiled iterations"


def timeline_of(timing: Timing) -> tuple[Timeline, str]:
    times, what = timeline_series(timing)
    return analyze_timeline(times), what


def _positions(indices: Sequence[int], limit: int = 8) -> str:
    shown = ", ".join(str(i + 1) for i in indices[:limit])
    return shown + (f", … ({len(indices)} in all)" if len(indices) > limit else "")


def warmup_advice(timing: Timing) -> Advice | None:
    timeline, what = timeline_of(timing)
    w = timeline.warmup
    if w is None:
        return None
    head = ", ".join(fmt_s(t) for t in w.times_s[:5]) + (", …" if w.iterations > 5 else "")
    evidence = (
        f"the first {w.iterations} of {timeline.n} {what} are slower than the steady state: "
        f"{head} vs a steady median of {fmt_s(w.steady_median_s)}",
        f"warm-up excess: {fmt_s(w.excess_s)}, {100 * w.share:.0f} % of the series' time",
    )
    fix = (
        f"Leave the first {w.iterations} iteration(s) out when you time this call (medians "
        "already do), and make as many warm-up calls before serving or benchmarking. A warm-up "
        "longer than one call means something is still built after the first call: inputs "
        "whose shape or dtype changes between calls (retracing), or lazily created state."
    )
    return w.share, evidence, fix


def spikes_advice(timing: Timing) -> Advice | None:
    timeline, what = timeline_of(timing)
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
        f"{100 * s.share:.0f} % of the series' time",
    )
    if s.period:
        fix = (
            f"Something runs every {s.period} iterations: a callback, logging or checkpoint "
            "on a batch interval, a tf.data buffer or prefetch refill, or Python's garbage "
            "collector (try `gc.freeze()` after setup, or `gc.disable()` around the loop to "
            "check); move it out of the timed loop or make it cheaper."
        )
    else:
        fix = (
            "Irregular spikes usually come from outside the call: other processes on the "
            "machine, Python's garbage collector (`gc.disable()` around the loop to check), "
            "or data loading stalls; pin threads (`tf.config.threading`) and re-run on a "
            "quiet machine before judging speed."
        )
    return s.share, evidence, fix


def drift_advice(timing: Timing) -> Advice | None:
    timeline, what = timeline_of(timing)
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
    if rising:
        fix = (
            "Iterations slow down as the run goes on. On a GPU check its temperature and "
            "clocks while it runs (`nvidia-smi -q -d CLOCK,TEMPERATURE`: thermal throttling); "
            "otherwise look for state that grows every iteration: outputs or tensors kept in "
            "a Python list, a growing `tf.function` cache (retracing), a history or metric "
            "that is never reset."
        )
    else:
        fix = (
            "Iterations speed up as the run goes on: it had not reached its steady state. Use "
            "more iterations, or leave out the early ones, before judging speed."
        )
    return d.share, evidence, fix
