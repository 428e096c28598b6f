"""The rich console view of a report: the answer first (a headline and the findings, most
important first), then the header, the class table, the breakdown, the culprits, the probes."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tfdiag.advise import ORDER, undiagnosed
from tfdiag.advise.diagnosis import Diagnosis
from tfdiag.advise.finding import Finding
from tfdiag.analysis.classify import CostClass
from tfdiag.analysis.pipeline import Analysis
from tfdiag.analysis.timeline import ProgramTimeline
from tfdiag.records.catalog import Category
from tfdiag.records.report import RunRecord
from tfdiag.records.units import fmt_pct, fmt_s
from tfdiag.render.caps import shown_notes
from tfdiag.render.findings import finding_block
from tfdiag.render.header import header_rows
from tfdiag.render.lines_console import lines_block
from tfdiag.render.names import NamedRows
from tfdiag.render.probes_console import render_probes
from tfdiag.render.safe import labelled
from tfdiag.render.sparkline import SPARK_WIDTH, sparkline

#: Culprit rows shown in the seeds' view.
TOP_CULPRITS = 12


def _header(report: RunRecord, timeline: ProgramTimeline) -> Panel:
    call, env = report.call, report.environment
    args = [*call.args, *(f"{k}={v}" for k, v in call.kwargs)]
    lines = [labelled("called", f"{call.label}({', '.join(args)})")]
    versions = env.stack()
    if versions or env.python:
        extra = [f"Python {env.python}"] if env.python else []
        lines.append(labelled("stack", " · ".join(versions + extra + env.machine())))
    for label, text in header_rows(report):
        lines.append(labelled(label, text))
        if label == "time":
            series, what = timeline.times, timeline.what
            if len(series) > 1:
                binned = ", slowest per bar" if len(series) > SPARK_WIDTH else ""
                trend = f"{sparkline(series)}  {what}, in run order{binned}"
                lines.append(labelled("trend", trend))
    title = Text.assemble("tfdiag · ", call.label)
    if report.partial:
        title.append_text(Text.assemble(" · ", ("partial", "red")))
    return Panel(Text("\n").join(lines), title=title, title_align="left", box=box.ROUNDED)


def _classes(a: Analysis) -> Table:
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


def _breakdown(a: Analysis) -> Table:
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


def _culprits(a: Analysis) -> NamedRows:
    """The culprits: one line each where the width allows, else each name below its row."""
    rows = tuple(
        (
            row.name,
            (
                row.category.value,
                str(row.calls),
                row.classification.short(),
                fmt_s(row.cum_s),
                fmt_pct(row.seeds_share),
            ),
        )
        for row in a.culprits[:TOP_CULPRITS]
    )
    return NamedRows(
        title="Culprits — the seeds' view: cumulative time as % of runtime − build "
        "(nested rows overlap)",
        name_header="function",
        headers=("category", "calls", "class", "cumulative", "%"),
        rows=rows,
        right=frozenset({1, 3, 4}),
    )


def _headline(report: RunRecord, brief: bool) -> Text:
    """The first line: what was called and how long it takes."""
    t = report.timing
    took = f" — {fmt_s(t.median_s)} per call" if t.median_s is not None else ""
    partial = " (partial)" if report.partial else ""
    line = Text.assemble(("tfdiag · ", "bold"), (report.call.label, "bold"), took, partial)
    if brief and report.machine is not None and report.machine.busy:
        line.append(f" · the machine was {report.machine.describe()}")
    return line


def _findings(report: RunRecord, findings: tuple[Finding, ...], brief: bool) -> RenderableType:
    if not findings:
        line = undiagnosed(report)
        if line is not None:
            return Text(line)
        return Text("No findings: nothing in this profile crosses a finding's threshold.")
    parts: list[RenderableType] = [
        Text.assemble(("Findings", "bold"), (f" — {ORDER}", "dim")),
    ]
    for n, f in enumerate(findings, 1):
        parts.extend(finding_block(f, head=f"{n}. ", evidence=2 if brief else None))
    return Group(*parts)


def report_tables(a: Analysis) -> list[RenderableType]:
    """The three tables of the view: call-count classes, where the time goes, culprits."""
    return [_classes(a), _breakdown(a), _culprits(a).table()]


def _notes(report: RunRecord, timeline: ProgramTimeline) -> list[str]:
    notes = list(report.notes)
    notes.extend(timeline.notes)
    if report.native_log.total:
        notes.append(
            f"TensorFlow and xprof wrote {report.native_log.total} native log line(s) while "
            "tfdiag worked: kept off your terminal, kept in the report (`native_log` in its "
            "JSON; `tfdiag explain --verbose` prints them)"
        )
    return notes


def render_report(d: Diagnosis, brief: bool = False) -> RenderableType:
    """The console view: the answer first (the findings, most important first), then how
    the run was measured, the tables and the probes; ``brief``: the findings only."""
    report, a = d.record, d.analysis
    parts: list[RenderableType] = [_headline(report, brief), _findings(report, d.findings, brief)]
    yours = lines_block(a.lines, top=3 if brief else 5)
    if yours is not None:
        parts.append(yours)
    if brief:
        parts.append(
            Text(
                "The whole report: report.show() · tfdiag explain FILE (without --brief)",
                style="dim",
            )
        )
        return Group(*parts)
    parts += [_header(report, d.timeline), _classes(a), _breakdown(a), _culprits(a)]
    probes = render_probes(d)
    if probes is not None:
        parts.append(probes)
    notes = _notes(report, d.timeline)
    if notes:
        parts.append(Text("\n".join(f"note: {n}" for n in shown_notes(notes)), style="dim"))
    return Group(*parts)


def render_brief(d: Diagnosis) -> RenderableType:
    return render_report(d, brief=True)
