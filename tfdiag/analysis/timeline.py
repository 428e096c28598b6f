"""The iteration timeline: warm-up, spikes and drift in a run's per-iteration times.

Pure functions over a sequence of seconds — no TensorFlow, no numpy, no printing.
The statistics are robust so that a clean but noisy series yields nothing:

- **warm-up**: a first iteration that would count as a spike, and the iterations
  after it still above the steady band (the median of the second half, plus 25 %
  or 4 robust standard deviations, whichever is larger), at most half the run;
- **drift**: a Theil–Sen slope over the steady iterations, kept only when the
  Mann–Kendall trend test is significant (|z| ≥ 3) *and* the fitted change over
  the run is at least 10 %;
- **spikes**: iterations at least 50 % above the expected time (the trend when
  there is drift, else the median) *and* 5 robust standard deviations
  (1.4826 × MAD of the residuals) above it; periodic when the gaps between them
  agree (80 % of gaps within ±10 % of the median gap).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from tfdiag.records.machine import BUSY_CORES
from tfdiag.records.report import RunRecord, Timing

#: Fewer timed iterations than this: no timeline finding.
MIN_POINTS = 8
#: An iteration within this fraction above the steady median is steady (warm-up band).
WARMUP_BAND = 0.25
#: ... or within this many robust standard deviations, when the series is noisier.
WARMUP_Z = 4.0
#: A warm-up longer than this fraction of the run is not a warm-up (drift reports it).
WARMUP_MAX_FRACTION = 0.5
#: A spike is at least this fraction above the expected time ...
SPIKE_REL = 0.5
#: ... and at least this many robust standard deviations above it.
SPIKE_Z = 5.0
#: Smallest fitted change over the run that counts as drift.
DRIFT_MIN_CHANGE = 0.10
#: Mann–Kendall |z| a drift must reach (p ≈ 0.003, two-sided).
DRIFT_Z = 3.0
#: Longer series are reduced to this many block medians before the O(n²) trend fit.
MAX_TREND_POINTS = 400
#: Spikes are periodic when this fraction of their gaps agree with the median gap.
PERIOD_AGREEMENT = 0.8
MAD_SCALE = 1.4826


@dataclass(frozen=True)
class Warmup:
    """The first ``iterations`` timed iterations ran slower than the steady state."""

    iterations: int
    times_s: tuple[float, ...]
    steady_median_s: float
    #: Time spent above the steady median during the warm-up.
    excess_s: float
    #: ``excess_s`` as a share of the whole series' time.
    share: float


@dataclass(frozen=True)
class Spikes:
    """Iterations far above the expected time; ``indices`` are 0-based series positions."""

    indices: tuple[int, ...]
    #: Median spike time over the expected time at that iteration (×).
    size: float
    max_s: float
    expected_s: float
    excess_s: float
    share: float
    #: Iterations between spikes when they are periodic, else None.
    period: int | None = None


@dataclass(frozen=True)
class Drift:
    """A monotonic trend over the steady iterations (after any warm-up)."""

    #: Theil–Sen slope, seconds per iteration.
    slope_s: float
    #: Fitted time at the first and last steady iteration.
    start_s: float
    end_s: float
    #: (end − start) / start: +0.3 is "30 % slower by the end of the run".
    change: float
    #: Mann–Kendall z statistic (sign = direction).
    z: float
    #: Time above the run's better end, as a share of the series' time.
    share: float
    first: int
    last: int


@dataclass(frozen=True)
class Timeline:
    """What the timeline shows; each part is None when the series does not show it."""

    n: int
    median_s: float | None
    warmup: Warmup | None = None
    spikes: Spikes | None = None
    drift: Drift | None = None


def _mad(values: Sequence[float], center: float) -> float:
    return statistics.median(abs(v - center) for v in values)


def _blocks(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    """At most MAX_TREND_POINTS (position, median) pairs, one per block of the series."""
    n = len(ys)
    if n <= MAX_TREND_POINTS:
        return list(xs), list(ys)
    size = math.ceil(n / MAX_TREND_POINTS)
    bx, by = [], []
    for start in range(0, n, size):
        bx.append(statistics.median(xs[start : start + size]))
        by.append(statistics.median(ys[start : start + size]))
    return bx, by


def theil_sen(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """(slope, intercept): the median pairwise slope, the median residual intercept."""
    slopes = [
        (ys[j] - ys[i]) / (xs[j] - xs[i])
        for i in range(len(xs))
        for j in range(i + 1, len(xs))
        if xs[j] != xs[i]
    ]
    slope = statistics.median(slopes) if slopes else 0.0
    intercept = statistics.median(y - slope * x for x, y in zip(xs, ys))
    return slope, intercept


def mann_kendall_z(ys: Sequence[float]) -> float:
    """The Mann–Kendall trend statistic as a z score (no tie correction: conservative)."""
    n = len(ys)
    if n < 3:
        return 0.0
    s = 0
    for i in range(n - 1):
        yi = ys[i]
        for j in range(i + 1, n):
            d = ys[j] - yi
            s += (d > 0) - (d < 0)
    var = n * (n - 1) * (2 * n + 5) / 18
    if s == 0:
        return 0.0
    return (s - math.copysign(1, s)) / math.sqrt(var)


def _warmup(times: Sequence[float]) -> Warmup | None:
    n = len(times)
    median = statistics.median(times[n // 2 :])
    # The spread around the steady median over the whole series: a warm-up of at most
    # half the run cannot inflate it, and it is steadier than the second half's alone.
    sigma = MAD_SCALE * _mad(times, median)
    if times[0] <= median + max(SPIKE_REL * median, SPIKE_Z * sigma):
        return None  # a warm-up starts with an iteration that would count as a spike
    upper = median + max(WARMUP_BAND * median, WARMUP_Z * sigma)
    w = 0
    while w < n and times[w] > upper:
        w += 1
    if w == 0 or w > WARMUP_MAX_FRACTION * n:
        return None
    head = tuple(times[:w])
    excess = sum(t - median for t in head)
    return Warmup(w, head, median, excess, excess / sum(times))


def _drift(times: Sequence[float], offset: int, total_s: float) -> Drift | None:
    return _drift_at([float(offset + i) for i in range(len(times))], times, total_s)


def _drift_at(xs: Sequence[float], times: Sequence[float], total_s: float) -> Drift | None:
    """A drift of ``times`` measured at run positions ``xs`` (a subset of the run, in order)."""
    if len(times) < MIN_POINTS:
        return None
    bx, by = _blocks(xs, times)
    z = mann_kendall_z(by)
    slope, intercept = theil_sen(bx, by)
    first, last = int(xs[0]), int(xs[-1])
    start, end = intercept + slope * first, intercept + slope * last
    if start <= 0 or end <= 0:
        return None
    change = (end - start) / start
    if abs(z) < DRIFT_Z or abs(change) < DRIFT_MIN_CHANGE or (z > 0) != (change > 0):
        return None
    floor = min(start, end)
    excess = sum(intercept + slope * x - floor for x in xs)
    return Drift(slope, start, end, change, z, excess / total_s, first, last)


def _period(indices: Sequence[int]) -> int | None:
    if len(indices) < 3:
        return None
    gaps = [b - a for a, b in zip(indices, indices[1:])]
    period = round(statistics.median(gaps))
    if period < 2:
        return None
    tolerance = max(1, round(0.1 * period))
    agree = sum(1 for g in gaps if abs(g - period) <= tolerance)
    return period if agree >= PERIOD_AGREEMENT * len(gaps) else None


def _spikes(
    times: Sequence[float], offset: int, drift: Drift | None, total_s: float
) -> Spikes | None:
    if len(times) < MIN_POINTS:
        return None
    if drift is not None:
        expected = [drift.start_s + drift.slope_s * i for i in range(len(times))]
    else:
        expected = [statistics.median(times)] * len(times)
    residuals = [t - e for t, e in zip(times, expected)]
    center = statistics.median(residuals)
    sigma = MAD_SCALE * _mad(residuals, center)
    hits = [
        i
        for i, (t, e, r) in enumerate(zip(times, expected, residuals))
        if t > (1 + SPIKE_REL) * e and r - center > SPIKE_Z * sigma
    ]
    if not hits:
        return None
    excess = sum(residuals[i] for i in hits)
    indices = tuple(offset + i for i in hits)
    return Spikes(
        indices=indices,
        size=statistics.median(times[i] / expected[i] for i in hits),
        max_s=max(times[i] for i in hits),
        expected_s=statistics.median(expected[i] for i in hits),
        excess_s=excess,
        share=excess / total_s,
        period=_period(indices),
    )


@lru_cache(maxsize=64)
def _analyze(times: tuple[float, ...]) -> Timeline:
    n = len(times)
    if n < MIN_POINTS or any(not math.isfinite(t) or t < 0 for t in times):
        return Timeline(n, statistics.median(times) if times else None)
    total = sum(times)
    if total <= 0:
        return Timeline(n, 0.0)
    warmup = _warmup(times)
    offset = warmup.iterations if warmup else 0
    steady = times[offset:]
    drift = _drift(steady, offset, total)
    return Timeline(
        n=n,
        median_s=statistics.median(times),
        warmup=warmup,
        spikes=_spikes(steady, offset, drift, total),
        drift=drift,
    )


def analyze_timeline(times: Sequence[float]) -> Timeline:
    """Warm-up, spikes and drift in ``times`` (seconds per iteration, in run order)."""
    return _analyze(tuple(float(t) for t in times))


def timeline_series(timing: Timing) -> tuple[tuple[float, ...], str, int]:
    """The series to read, what it is, and where it starts in ``timing.iteration_s`` (-1:
    the profiled iterations): the plain iterations (no profiler attached) when there are
    enough, else every timed one (the first under the TF profiler, said so), else the
    profiled ones."""
    plain = timing.iteration_s[timing.traced :]
    if timing.traced and len(plain) >= MIN_POINTS:
        return plain, "plain iterations (no profiler attached)", timing.traced
    if len(timing.iteration_s) >= MIN_POINTS or not timing.profiled_iteration_s:
        if timing.traced:
            what = f"timed iterations (the first {timing.traced} under the TF profiler)"
        else:
            what = "timed iterations (no profiler attached)"
        return timing.iteration_s, what, 0
    return timing.profiled_iteration_s, "profiled iterations", -1


#: Per-iteration load is read only when iterations are this long: the kernel counts CPU time
#: in 10 ms ticks, so a shorter iteration's figure is mostly rounding.
MIN_LOAD_ITERATION_S = 0.02


@dataclass(frozen=True)
class ProgramTimeline:
    """The timeline of a run, its spikes and drift kept only where the machine's load does
    not explain them; ``notes`` say what was left out and why."""

    timeline: Timeline
    times: tuple[float, ...]
    what: str
    notes: tuple[str, ...] = ()


def program_timeline(record: RunRecord) -> ProgramTimeline:
    """What the iteration times say about the program (not the machine).

    On a busy machine (:class:`~tfdiag.records.machine.MachineLoad`), irregular spikes are
    left out (periodic ones recur at the program's own period and stay), and a drift stays
    only if it also holds on the iterations during which other processes used the least CPU.
    On any machine, spikes that mostly coincide with a burst of other processes' CPU time
    (when iterations are long enough to tell) are left out.
    """
    times, what, start = timeline_series(record.timing)
    tl = analyze_timeline(times)
    machine = record.machine
    if machine is None or (tl.spikes is None and tl.drift is None):
        return ProgramTimeline(tl, times, what)
    load: tuple[float, ...] = ()
    if start >= 0 and tl.median_s:
        load = _load_windows(times, machine.per_iteration[start : start + len(times)])
    notes: list[str] = []
    spikes, drift = tl.spikes, tl.drift
    if spikes is not None and spikes.period is None:
        if machine.busy:
            spikes = None
            notes.append("irregular spikes left out: the machine was busy")
        elif load:
            typical = statistics.median(load)
            loaded = [i for i in spikes.indices if load[i] >= typical + BUSY_CORES]
            if 2 * len(loaded) >= len(spikes.indices):
                spikes = None
                notes.append("spikes left out: most came with a burst of other processes' CPU time")
    if drift is not None and machine.busy:
        held = _held_without_load(times, load, drift, sum(times))
        if held is None:
            drift = None
            notes.append(
                "a drift left out: the machine was busy and it does not hold on the "
                "iterations with the least load"
                if load
                else "a drift left out: the machine was busy (no per-iteration load to hold it "
                "against)"
            )
    return ProgramTimeline(replace(tl, spikes=spikes, drift=drift), times, what, tuple(notes))


def _load_windows(times: Sequence[float], load: Sequence[float]) -> tuple[float, ...]:
    """Per-iteration load, each iteration given the time-weighted load of the window of
    consecutive iterations around it that lasts at least :data:`MIN_LOAD_ITERATION_S` (one
    iteration when it is that long): shorter ones are mostly the kernel's tick rounding.
    Empty when the figures do not cover the series."""
    if len(load) != len(times) or not times:
        return ()
    typical = statistics.median(times)
    size = max(1, math.ceil(MIN_LOAD_ITERATION_S / typical)) if typical > 0 else len(times)
    out: list[float] = []
    for start in range(0, len(times), size):
        ts, ls = times[start : start + size], load[start : start + size]
        total = sum(ts)
        value = sum(t * v for t, v in zip(ts, ls)) / total if total > 0 else 0.0
        out.extend([value] * len(ts))
    return tuple(out)


def _held_without_load(
    times: Sequence[float], load: Sequence[float], drift: Drift, total_s: float
) -> Drift | None:
    """The drift, when it holds on the iterations of its range with at most their median
    load: a Theil–Sen line through them changes by at least :data:`DRIFT_MIN_CHANGE` the same
    way. (Its significance was tested on the whole series; half of a short series has too
    few points for a second Mann–Kendall test to pass, which would drop every drift.) None
    when it does not hold there, or there is no per-iteration load."""
    if not load:
        return None
    span = range(drift.first, drift.last + 1)
    typical = statistics.median(load[i] for i in span)
    quiet = [i for i in span if load[i] <= typical]
    if len(quiet) < 3:
        return None
    slope, intercept = theil_sen([float(i) for i in quiet], [times[i] for i in quiet])
    start, end = intercept + slope * drift.first, intercept + slope * drift.last
    if start <= 0 or end <= 0:
        return None
    change = (end - start) / start
    if abs(change) < DRIFT_MIN_CHANGE or (change > 0) != (drift.change > 0):
        return None
    return drift
