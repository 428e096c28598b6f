"""The rich console view of a report: header, class table, breakdown, culprits, findings."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tfdiag.advise import findings_of
from tfdiag.analysis.classify import CostClass
from tfdiag.analysis.pipeline import analysis_of
from tfdiag.records.catalog import Category
from tfdiag.records.report import RunRecord
from tfdiag.records.units import fmt_pct, fmt_s
from tfdiag.render.caps import shown_notes
from tfdiag.render.findings import finding_block
from tfdiag.render.names import NameTable, wrap_name
from tfdiag.render.probes_console import render_probes
from tfdiag.render.safe import labelled
from tfdiag.render.sparkline import SPARK_WIDTH, sparkline

#: Culprit rows shown in the seeds' view.
TOP_CULPRITS = 12
_FLAVOURS = {"keras3": "Keras 3", "tf_keras": "tf_keras (legacy Keras 2)"}


def _header(report: RunRecord) -> Panel:
    call, env, t = report.call, report.environment, report.timing
    args = [*call.args, *(f"{k}={v}" for k, v in call.kwargs)]
    lines = [labelled("called", f"{call.label}({', '.join(args)})")]
    versions = env.stack()
    flavour = _FLAVOURS.get(call.flavour, call.flavour)
    if versions or env.python:
        extra = [f"Python {env.python}"] if env.python else []
        lines.append(labelled("stack", " · ".join(versions + extra + env.machine())))
    lines.append(labelled("flavour", flavour))
    dist = report.distribution
    if dist is not None:
        where = f"{dist.task} (worker {dist.rank})" if dist.task_type else "one process"
        lines.append(
            labelled(
                "job",
                f"{dist.strategy or 'unknown'} · {where} · {dist.num_replicas} replicas in sync",
            )
        )
    if t.profiled_calls == t.iterations + 1:
        profiled = f"{t.iterations} iterations + 1 cold call under cProfile"
    elif t.profiled_calls == t.iterations:
        profiled = f"{t.iterations} iterations under cProfile"
    else:  # a bare .prof read with --iterations
        profiled = f"{t.profiled_calls} calls in the profile, read as {t.iterations} iterations"
    lines.append(labelled("profile", profiled))
    if t.iteration_s:
        lo, hi = min(t.iteration_s), max(t.iteration_s)
        lines.append(
            labelled(
                "time",
                f"{fmt_s(t.median_s)} per iteration, median of {len(t.iteration_s)} with no "
                f"profiler attached (IQR {fmt_s(t.iqr_s)}, min {fmt_s(lo)}, max {fmt_s(hi)})",
            )
        )
        if len(t.iteration_s) > 1:
            binned = " (slowest per bar)" if len(t.iteration_s) > SPARK_WIDTH else ""
            lines.append(labelled("trend", f"{sparkline(t.iteration_s)}  in run order{binned}"))
    if t.first_call_s is not None:
        slow = f" · cProfile slowdown ×{t.profiler_slowdown:.2f}" if t.profiler_slowdown else ""
        lines.append(
            labelled("first", f"{fmt_s(t.first_call_s)} (cold call, under cProfile){slow}")
        )
    title = Text.assemble("tfdiag · ", call.label)
    if report.partial:
        title.append_text(Text.assemble(" · ", ("partial", "red")))
    return Panel(Text("\n").join(lines), title=title, title_align="left", box=box.ROUNDED)


def _classes(report: RunRecord) -> Table:
    a = analysis_of(report)
    table = Table(
        title="Build vs per-iteration — call-count classes (the seeds' method, self time)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        expand=True,  # the three tables of the view share one width
    )
    for col in ("class", "functions", "self time", "% of profiled", "per call"):
        table.add_column(col, justify="left" if col == "class" else "right")
    labels = {
        CostClass.BUILD: "build (called 1–2×)",
        CostClass.PER_ITERATION: "per-iteration (k×N calls)",
        CostClass.MIXED: "mixed (other counts)",
    }
    for cost in CostClass:
        seconds = a.class_seconds(cost)
        per_call = "" if cost is CostClass.BUILD else fmt_s(seconds / max(a.profiled_calls, 1))
        table.add_row(
            labels[cost],
            str(a.class_count(cost)),
            fmt_s(seconds),
            fmt_pct(seconds / a.total_s if a.total_s else 0.0),
            per_call,
        )
    table.caption = (
        f"profiled {fmt_s(a.total_s)}; runtime − build = {fmt_s(a.runtime_minus_build_s)} "
        "(the seeds' denominator)"
    )
    table.caption_justify = "left"
    return table


def _breakdown(report: RunRecord) -> Table:
    a = analysis_of(report)
    table = Table(
        title="Where the time goes — non-overlapping: each function's self time goes to its "
        "nearest culprit; rows sum to 100 %",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        expand=True,
    )
    table.add_column("category")
    cats = [c for c in Category if c is not Category.WRAPPER and a.attribution.seconds(c) > 0]
    if a.exact_steady:
        cats.sort(key=lambda c: a.steady_attribution.seconds(c), reverse=True)
        for col in ("first call", f"steady ({a.iterations} calls)", "per iteration", "% of steady"):
            table.add_column(col, justify="right")
        for cat in cats:
            steady = a.steady_attribution.seconds(cat)
            table.add_row(
                cat.label,
                fmt_s(a.first_call_seconds(cat)),
                fmt_s(steady),
                fmt_s(steady / a.iterations),
                fmt_pct(a.steady_share(cat)),
            )
        table.caption = "steady state: the iterations after the cold call, measured exactly"
    else:
        cats.sort(key=lambda c: a.attribution.seconds(c), reverse=True)
        for col in ("build", "per-iteration", "mixed", "% of total", "% of runtime − build"):
            table.add_column(col, justify="right")
        for cat in cats:
            table.add_row(
                cat.label,
                *(fmt_s(a.attribution.seconds(cat, cost)) for cost in CostClass),
                fmt_pct(a.attribution.share(cat)),
                fmt_pct(a.steady_share(cat)),
            )
        table.caption = "no cold-call snapshot (a bare .prof): steady state = runtime − build"
    table.caption_justify = "left"
    return table


def _culprits(report: RunRecord, width: int | None = None) -> Table:
    """The culprits table; ``width`` wraps the function names (:mod:`tfdiag.render.names`)."""
    a = analysis_of(report)
    table = Table(
        title="Culprits — the seeds' view: cumulative time as % of runtime − build "
        "(nested rows overlap)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.expand = True
    table.add_column("function", overflow="fold", ratio=1, no_wrap=width is None)
    table.add_column("category", no_wrap=True)
    table.add_column("calls", justify="right", no_wrap=True)
    table.add_column("class", no_wrap=True)
    table.add_column("cumulative", justify="right", no_wrap=True)
    table.add_column("%", justify="right", no_wrap=True)
    for row in a.culprits[:TOP_CULPRITS]:
        table.add_row(
            row.name if width is None else wrap_name(row.name, width),
            row.category.value,
            str(row.calls),
            row.classification.short(),
            fmt_s(row.cum_s),
            fmt_pct(row.seeds_share),
        )
    return table


def _findings(report: RunRecord) -> RenderableType:
    findings = findings_of(report)
    if not findings:
        return Text("No findings: nothing in this profile crosses a finding's threshold.")
    parts: list[RenderableType] = [Text("Findings", style="bold")]
    for n, f in enumerate(findings, 1):
        parts.extend(finding_block(f, head=f"{n}. "))
    return Group(*parts)


def report_tables(report: RunRecord) -> list[Table]:
    """The three tables of the view: call-count classes, where the time goes, culprits."""
    return [_classes(report), _breakdown(report), _culprits(report)]


def _culprits_fitted(report: RunRecord) -> NameTable:
    names = tuple(r.name for r in analysis_of(report).culprits[:TOP_CULPRITS])
    return NameTable(lambda width: _culprits(report, width), names)


def render_report(report: RunRecord) -> RenderableType:
    """The whole console view as one renderable."""
    parts: list[RenderableType] = [
        _header(report),
        _classes(report),
        _breakdown(report),
        _culprits_fitted(report),
        _findings(report),
    ]
    probes = render_probes(report)
    if probes is not None:
        parts.insert(-1, probes)
    if report.notes:
        parts.append(Text("\n".join(f"note: {n}" for n in shown_notes(report.notes)), style="dim"))
    return Group(*parts)
