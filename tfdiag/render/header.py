"""What a report's header says, as (label, text) rows: one source for the console panel and
the HTML page, so the two never describe the same run differently (how many calls were
timed, which were under a profiler, how busy the machine was)."""

from __future__ import annotations

from tfdiag.records.catalog.backends import profiler_of
from tfdiag.records.numbers import median
from tfdiag.records.report import RunRecord, Timing
from tfdiag.records.units import fmt_s
from tfdiag.render.flavour import flavour_label


def profiled_line(t: Timing) -> str:
    """What ran under cProfile."""
    if t.profiled_calls == t.iterations + 1:
        return f"{t.iterations} iterations + 1 cold call under cProfile"
    if t.profiled_calls == t.iterations:
        return f"{t.iterations} iterations under cProfile"
    # a bare .prof read with --iterations
    return f"{t.profiled_calls} calls in the profile, read as {t.iterations} iterations"


def time_line(t: Timing, profiler: str = "TF profiler") -> str:
    """The median of the plain calls, and the traced ones named apart (never mixed), under
    ``profiler`` (the JAX profiler on JAX)."""
    plain = t.plain_s
    lo, hi = min(plain), max(plain)
    line = (
        f"{fmt_s(t.median_s)} per iteration, median of {len(plain)} plain call(s) with no "
        f"profiler attached (IQR {fmt_s(t.iqr_s)}, min {fmt_s(lo)}, max {fmt_s(hi)})"
    )
    traced = t.iteration_s[: t.traced] if len(plain) < len(t.iteration_s) else ()
    if traced:
        line += f"; {len(traced)} more under the {profiler} (median {fmt_s(median(traced))})"
    return line


def first_call_line(t: Timing) -> str | None:
    if t.first_call_s is None:
        return None
    slow = f" · cProfile slowdown ×{t.profiler_slowdown:.2f}" if t.profiler_slowdown else ""
    return f"{fmt_s(t.first_call_s)} (cold call, under cProfile){slow}"


def job_line(report: RunRecord) -> str | None:
    dist = report.distribution
    if dist is None:
        return None
    where = f"{dist.task} (worker {dist.rank})" if dist.task_type else "one process"
    return f"{dist.strategy or 'unknown'} · {where} · {dist.num_replicas} replicas in sync"


def header_rows(report: RunRecord) -> list[tuple[str, str]]:
    """The header's rows after ``called``/``stack`` (which each view lays out itself), in
    order: flavour (Keras and its backend), job, profile, time, first call, load (the
    machine's, when measured).
    The console adds its sparkline after ``time``; the HTML page draws the timeline as a
    chart instead."""
    t = report.timing
    rows = [("flavour", flavour_label(report.call, report.environment))]
    job = job_line(report)
    if job is not None:
        rows.append(("job", job))
    rows.append(("profile", profiled_line(t)))
    if t.iteration_s:
        rows.append(("time", time_line(t, profiler_of(report.environment.framework))))
    first = first_call_line(t)
    if first is not None:
        rows.append(("first", first))
    if report.machine is not None:
        rows.append(("load", report.machine.describe()))
    return rows
