"""The rich console view of a ``tfdiag run`` result: Keras calls by site, findings of the
costly ones."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from tfdiag.advise.diagnosis import diagnosis_of
from tfdiag.advise.patches import patch_of
from tfdiag.advise.script import ScriptFinding, script_findings
from tfdiag.analysis.lines import script_lines
from tfdiag.records.patches import FixRecord, PatchRecord
from tfdiag.records.units import fmt_pct, fmt_s
from tfdiag.render.caps import shown_notes
from tfdiag.render.findings import finding_block
from tfdiag.render.lines_console import lines_block
from tfdiag.render.names import NamedRows, name_parts
from tfdiag.render.patch_block import PatchBlock
from tfdiag.render.safe import labelled

if TYPE_CHECKING:
    from tfdiag.records.script import CallSite, ScriptRecord

#: Sites listed in the table; the JSON has them all.
TOP_SITES = 20
#: Findings shown per costly site.
TOP_FINDINGS = 3
_BAR_WIDTH = 10


def _header(result: ScriptRecord) -> Panel:
    args = " ".join(result.argv)
    status = ("ok", "green") if result.ok else (result.status, "red")
    keras = result.keras_s
    share = keras / result.wall_s if result.wall_s > 0 else 0.0
    lines = [
        labelled("script", result.script + (" " + args if args else "")),
        labelled("status", status),
        labelled(
            "time",
            f"{fmt_s(result.wall_s)} wall · Keras calls {fmt_s(keras)} ({fmt_pct(share)}) at "
            f"{len(result.sites)} call site(s) · the rest "
            f"{fmt_s(max(result.wall_s - keras, 0.0))} (imports, data, your own Python); "
            f"tfdiag's own bookkeeping ({fmt_s(result.overhead_s)}) is left out",
        ),
    ]
    if result.iterations:
        lines.append(
            labelled(
                "profile", f"first call + {result.iterations} more of each site under cProfile"
            )
        )
    else:
        lines.append(labelled("profile", "none (timing only)"))
    return Panel(
        Text("\n").join(lines),
        title=Text.assemble("tfdiag run · ", result.script),
        title_align="left",
        box=box.ROUNDED,
    )


def _bar(share: float) -> str:
    filled = round(max(min(share, 1.0), 0.0) * _BAR_WIDTH)
    return "█" * filled + "·" * (_BAR_WIDTH - filled)


def _sites(result: ScriptRecord) -> RenderableType:
    if not result.sites:
        return Text(
            "No Keras predict/fit/evaluate/*_on_batch call, tf.function step of your own "
            "or eager model call from your code was made by the script."
        )
    rows = []
    for site in result.sites[:TOP_SITES]:
        share = result.share(site)
        errors = f" ({site.errors} raised)" if site.errors else ""
        rows.append(
            (
                f"{site.location}{SITE_SEP}{site.label}",
                (
                    f"{site.calls}{errors}",
                    fmt_s(site.total_s),
                    fmt_s(site.per_call_s),
                    fmt_pct(share),
                    _bar(share),
                ),
            )
        )
    more = len(result.sites) - TOP_SITES
    return NamedRows(
        title="Keras calls by call site — share of the script's wall time",
        name_header="site · call",
        headers=("calls", "total", "per call", "share", ""),
        rows=tuple(rows),
        right=frozenset({0, 1, 2, 3}),
        caption=f"… {more} more site(s) in the JSON" if more > 0 else None,
        split=site_parts,
    )


SITE_SEP = " · "


def site_parts(name: str) -> list[str]:
    """A site ``train.py:12 · Sequential.predict`` breaks after the location and before a
    dot of the call, never inside a name."""
    location, sep, call = name.partition(SITE_SEP)
    if not sep:
        return name_parts(name)
    return [location + sep, *(name_parts(call) if call else [])]


def _costly(result: ScriptRecord, site: CallSite) -> list[RenderableType]:
    report = site.report
    if report is None:
        return []
    head = Text.assemble(
        (site.location, "bold"),
        f" · {site.label} — {fmt_pct(result.share(site))} of the script, {site.calls} call(s)",
    )
    parts: list[RenderableType] = [head]
    if site.code:
        parts.append(Text(f"   {site.code}", style="cyan"))
    median = site.unprofiled_median_s
    if median is not None:
        parts.append(Text(f"   {fmt_s(median)} per call, median with no profiler attached"))
    findings = diagnosis_of(report).findings[:TOP_FINDINGS]
    if not findings:
        parts.append(Text("   no findings: nothing crosses a finding's threshold", style="dim"))
    for f in findings:
        parts.extend(finding_block(f, head="   ", body="     ", evidence=1))
    return parts


#: Findings of the script shown first (each costly site's own follow below).
TOP_SCRIPT_FINDINGS = 3


def _shown(result: ScriptRecord) -> list[ScriptFinding]:
    """The first findings, and after them any other that ``tfdiag fix`` wrote a patch for."""
    found = script_findings(result)
    return [sf for n, sf in enumerate(found) if n < TOP_SCRIPT_FINDINGS or _patched(result, sf)]


def _patched(result: ScriptRecord, sf: ScriptFinding) -> bool:
    p = patch_of(result.fix, sf.finding)
    return p is not None and bool(p.patch)


def _fix_line(fix: FixRecord) -> Text:
    made = sum(bool(p.patch) for p in fix.patches)
    return Text(
        f"tfdiag fix: {made} patch(es) proposed, {fix.offered} verified faster with matching "
        f"output (--runs {fix.runs}); each under its finding's fix",
        style="dim",
    )


def _findings(result: ScriptRecord) -> list[RenderableType]:
    """The script's findings, the largest share of its time first: the answer; in a saved
    ``tfdiag fix`` result, each with its patch block under its fix."""
    found = _shown(result)
    if not found:
        return []
    parts: list[RenderableType] = [
        Text.assemble(
            ("Findings", "bold"),
            (" — the script's, the largest share of its wall time first (conclusions last)", "dim"),
        )
    ]
    if result.fix is not None:
        parts.append(_fix_line(result.fix))
    for n, sf in enumerate(found, 1):
        where = f"{sf.site.location} · {sf.site.label}" if sf.site else "your script's own lines"
        parts.append(Text(f"{n}. in {where}: {fmt_pct(sf.share)} of the script", style="dim"))
        parts.extend(finding_block(sf.finding, head="   ", body="     ", evidence=2))
        if result.fix is not None:
            p = patch_of(result.fix, sf.finding)
            record = p or PatchRecord(sf.finding.id, reason="tfdiag fix recorded nothing for it")
            parts.append(PatchBlock(record, indent=5))
    return parts


def render_script(result: ScriptRecord) -> RenderableType:
    """The whole view as one renderable: the findings first, then your lines, then how the
    script was measured and each costly site."""
    parts: list[RenderableType] = [*_findings(result)]
    yours = lines_block(
        script_lines(result.lines),
        title="Your lines",
        scope="% of the script's wall time (loop: inside a loop)",
    )
    if yours is not None:
        parts.append(yours)
    parts += [_header(result), _sites(result)]
    costly = result.costly()
    if costly:
        parts.append(Text("Costly call sites (each profiled like tfdiag.profile)", style="bold"))
        for site in costly:
            parts.extend(_costly(result, site))
    if result.notes:
        parts.append(Text("\n".join(f"note: {n}" for n in shown_notes(result.notes)), style="dim"))
    return Group(*parts)
