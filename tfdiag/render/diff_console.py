"""The rich console view of a diff: the verdict and ratio, each run's times and noise, any
warning, then the findings resolved, new and persisting."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from tfdiag.advise.diff import DiffRecord, Side
from tfdiag.advise.script_diff import ScriptDiffRecord
from tfdiag.records.units import fmt_of_the_time, fmt_s
from tfdiag.render.diff_changes import changes_tables
from tfdiag.render.safe import labelled

_VERDICT_STYLE = {"faster": "bold green", "slower": "bold red", "same": "bold"}


def headline(record: DiffRecord) -> str:
    """``AFTER is faster: 0.08× the time per iteration, beyond both runs' noise``."""
    r = fmt_of_the_time(record.ratio)  # a 538× speed-up: "1/538 of the time"
    if record.verdict == "same":
        return f"the same within the noise: AFTER takes {r} per iteration"
    return f"AFTER is {record.verdict}: {r} per iteration, beyond both runs' noise"


def _side(role: str, side: Side) -> Text:
    s = side.spread
    return labelled(
        role,
        f"{side.label} ({side.name}): median {fmt_s(s.median_s)} per iteration, IQR "
        f"{fmt_s(s.iqr_s)} ({fmt_s(s.q1_s)} to {fmt_s(s.q3_s)}, {s.n} iterations)",
    )


def render_diff(record: DiffRecord | ScriptDiffRecord) -> RenderableType:
    if isinstance(record, ScriptDiffRecord):
        from tfdiag.render.script_diff import render_script_diff

        return render_script_diff(record)
    lines = [
        Text(headline(record), style=_VERDICT_STYLE.get(record.verdict, "bold")),
        _side("before", record.before),
        _side("after", record.after),
    ]
    lines += [labelled("warning", (w, "yellow")) for w in record.warnings]
    parts: list[RenderableType] = [Panel(Group(*lines), title="tfdiag diff", box=box.ROUNDED)]
    parts += changes_tables(
        record.resolved,
        record.new,
        record.persisting,
        "impact: as in each report, the share of the time the finding's fix can remove; "
        "faster/slower: the runs' interquartile intervals do not overlap (docs/ci.md)",
    )
    return Group(*parts)
