"""The HTML page of one report: header, findings (evidence, fix, verification), the
iteration timeline, the console view's tables, and flame graphs of the profile and of the
sampled stacks."""

from __future__ import annotations

from collections.abc import Sequence

from tfdiag.advise import Finding
from tfdiag.advise.diagnosis import Diagnosis
from tfdiag.analysis.lines import UserLine
from tfdiag.records.report import RunRecord
from tfdiag.records.units import fmt_pct0
from tfdiag.records.verification import Verification
from tfdiag.records.version import __version__
from tfdiag.render.caps import shown_notes
from tfdiag.render.console import report_tables
from tfdiag.render.findings import verification_lines
from tfdiag.render.header import header_rows
from tfdiag.render.html.flame import profile_tree, sampled_tree
from tfdiag.render.html.page import e, flame_section, page
from tfdiag.render.html.rich_html import to_html
from tfdiag.render.html.svg import timeline_svg
from tfdiag.render.lines_console import calls_text
from tfdiag.render.probes_console import render_probes


def _header(report: RunRecord) -> str:
    call, env = report.call, report.environment
    args = [*call.args, *(f"{k}={v}" for k, v in call.kwargs)]
    rows: list[tuple[str, str]] = [("called", f"{call.label}({', '.join(args)})")]
    extra = [f"Python {env.python}"] if env.python else []
    rows.append(("stack", " · ".join(env.stack() + extra) or "–"))
    rows.append(
        ("machine", " · ".join([*env.machine(), *([env.platform] if env.platform else [])]))
    )
    rows.extend(header_rows(report))
    if report.created:
        rows.append(("recorded", report.created))
    cells = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rows)
    partial = ' <span class="partial">partial</span>' if report.partial else ""
    return f"<h1>tfdiag · {e(call.label)}{partial}</h1><dl class=head>{cells}</dl>"


def verification_html(verification: Verification | None) -> str:
    """A finding's verification as the console shows it (``verification_lines``): the
    verdict, each variant's figures and check, the code it ran kept line by line, the
    notes; empty without one."""
    if verification is None:
        return ""
    text = "\n".join(line.plain for line in verification_lines(verification, body=""))
    return f'<pre class="verification">{e(text)}</pre>'


def finding_html(n: int, f: Finding) -> str:
    evidence = "".join(f"<li>{e(x)}</li>" for x in f.evidence)
    return (
        f'<article class="finding {e(f.severity)}" id="finding-{e(f.id)}">'
        f'<h3><span class="sev">{e(f.severity)}</span>{n}. <code>{e(f.id)}</code> — '
        f'{e(f.title)} <span class="impact">(impact {e(fmt_pct0(f.impact))})</span></h3>'
        + (f"<ul>{evidence}</ul>" if evidence else "")
        + f'<div><span class="fix-label">Fix:</span><pre class="fix">{e(f.fix)}</pre></div>'
        + verification_html(f.verification)
        + "</article>"
    )


def _findings(found: tuple[Finding, ...]) -> str:
    if not found:
        return (
            '<h2>Findings</h2><p id="findings" class="none">No findings: nothing in this '
            "profile crosses a finding's threshold.</p>"
        )
    blocks = "".join(finding_html(n, f) for n, f in enumerate(found, 1))
    return f'<h2>Findings</h2><div id="findings">{blocks}</div>'


def _your_lines(lines: Sequence[UserLine]) -> str:
    """Your lines as a table (all of them; the console shows the first few)."""
    if not lines:
        return ""
    rows = "".join(
        f"<tr><td>{e(fmt_pct0(u.share))}</td><td>{e(calls_text(u))}</td>"
        f"<td><code>{e(u.location)}</code></td><td><code>{e(u.code)}</code></td>"
        f"<td>{e(u.api or 'your own code')}{' (the call profiled)' if u.entry else ''}</td></tr>"
        for u in lines
    )
    return (
        '<h2>Your lines</h2><p class="caption">Where your code calls the framework: the '
        "share of steady-state time below each line and how often it ran per iteration "
        "(≈: an estimate, the line shares its call with others).</p>"
        '<div class="scroll"><table id="your-lines"><thead><tr><th>share</th><th>calls</th>'
        "<th>line</th><th>code</th><th>calls into</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )


def report_body(d: Diagnosis) -> str:
    report = d.record
    parts = [_header(report), _findings(d.findings), _your_lines(d.analysis.lines)]
    svg = timeline_svg(d.timeline)
    if svg is not None:
        parts.append(f"<h2>Iteration timeline</h2>{svg}")
    parts.append('<h2>Where the time goes</h2><div id="tables">')
    parts += [to_html(t) for t in report_tables(d.analysis)]
    parts.append("</div>")
    tree = profile_tree(report.profile, report.call.label)
    if tree is not None:
        parts.append(
            flame_section(
                "flame-profile",
                "Profile (cProfile), as an icicle",
                "Callers above callees; a bar's width is its cumulative time over the whole "
                "profiled run. cProfile keeps callers, not whole stacks, so a function called "
                "from several places has its time split by those calls. Click a bar to zoom.",
                tree,
            )
        )
    probes = report.probes
    sampled = (
        sampled_tree(probes.sampling, "sampled stacks") if probes and probes.sampling else None
    )
    if sampled is not None:
        parts.append(
            flame_section(
                "flame-sampled",
                "Sampled stacks (sampling probe)",
                "Whole Python stacks read every few milliseconds during the sampling pass, "
                "merged: a bar's width is the time sampled inside it.",
                sampled,
            )
        )
    extra = render_probes(d)
    if extra is not None:
        parts.append(f"<h2>Probes</h2>{to_html(extra)}")
    if report.notes:
        notes = "".join(f"<li>{e(n)}</li>" for n in shown_notes(report.notes))
        parts.append(f'<h2>Notes</h2><ul class="notes">{notes}</ul>')
    parts.append(_footer())
    return "\n".join(parts)


def _footer() -> str:
    return (
        f"<footer>Written by tfdiag {e(__version__)}. The flame graphs are drawn by "
        "d3-flame-graph (Apache-2.0) with d3 (ISC), inlined in this page; it loads "
        "nothing from the network.</footer>"
    )


def report_html(d: Diagnosis) -> str:
    """The whole page of one report's diagnosis."""
    return page(f"tfdiag · {d.record.call.label}", report_body(d), scripts=True)
