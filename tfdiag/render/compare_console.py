"""The rich console view of a comparison: header, one table per kind, do/don't list."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tfdiag.units import fmt_s

if TYPE_CHECKING:
    from tfdiag.compare.result import CompareResult, MethodResult

_KIND_TITLES = {"inference": "Inference", "training": "Training"}


def fmt_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "–"
    return f"{ratio:.0f}×" if ratio >= 100 else f"{ratio:.1f}×" if ratio >= 10 else f"{ratio:.2f}×"


def fmt_percent(percent: float | None) -> str:
    return "–" if percent is None else f"{percent:+,.0f} %"


def _header(result: CompareResult) -> Panel:
    env, s = result.environment, result.settings
    lines = [f"[bold]model[/]    {escape(result.model)} ({escape(result.flavour)})"]
    if result.data:
        lines.append("[bold]data[/]     " + escape(" · ".join(f"{k}: {v}" for k, v in result.data)))
    versions = [
        f"{name} {v}"
        for name, v in (
            ("TensorFlow", env.tensorflow),
            ("Keras", env.keras),
            ("tf_keras", env.tf_keras),
        )
        if v
    ]
    if env.cpu_count:
        versions.append(f"{env.cpu_count} CPUs")
    gpus = [d for d in env.devices if d.startswith("GPU")]
    versions.append(f"{len(gpus)} GPU" if gpus else "no GPU")
    lines.append(f"[bold]stack[/]    {escape(' · '.join(versions))}")
    lines.append(
        f"[bold]measured[/] {s.warmup} warm-up call(s) per method, then {s.repeats} interleaved "
        f"blocks of ≥ {fmt_s(s.min_block_s)}; median and IQR of the time per call"
    )
    lines.append(
        f"[bold]checked[/]  outputs against the baseline's (rtol {s.rtol:g}, atol {s.atol:g}); "
        f"training loss must not rise > {100 * s.loss_rise:.0f} %"
    )
    return Panel("\n".join(lines), title="tfdiag · compare", title_align="left", box=box.ROUNDED)


def _status(result: CompareResult, m: MethodResult) -> Text:
    if m.error is not None:
        return Text("error", style="red")
    if m.mismatch is not None:
        return Text("mismatch", style="red")
    rec = result.recommendation(m.kind)
    if rec is not None and rec.method is m:
        return Text("★ best", style="bold green")
    if result.baseline(m.kind) is m:
        return Text("baseline", style="bold")
    return Text("ok", style="green")


def _iqr(m: MethodResult) -> Text:
    text = Text(fmt_s(m.iqr_s))
    if m.noisy and m.spread is not None:
        text.append(f" (!{100 * m.spread:.0f}%)", style="yellow")
    return text


def _loss(m: MethodResult) -> str:
    if m.loss_before is None:
        return "–"
    after = "–" if m.loss_after is None else f"{m.loss_after:.3f}"
    return f"{m.loss_before:.3f} → {after}"


def _table(result: CompareResult, kind: str) -> Table:
    base = result.baseline(kind)
    base_name = base.name if base is not None else "baseline"
    s = result.settings
    unit = "all of x" if kind == "inference" else "one pass over x and y"
    table = Table(
        title=f"{_KIND_TITLES.get(kind, kind)} — time per call ({unit}, batch size {s.batch_size})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        collapse_padding=True,
        pad_edge=False,
    )
    table.add_column("method", ratio=None, min_width=16)
    for col in ("median", "IQR", "first", "× fastest", f"vs {base_name}", "seeds' %"):
        table.add_column(col, justify="right", no_wrap=True)
    training = kind == "training"
    if training:
        table.add_column("loss", no_wrap=True)
    table.add_column("status", overflow="fold")
    methods = sorted(
        result.of_kind(kind),
        key=lambda m: (m.median_s is None or m.problem is not None, m.median_s or 0.0),
    )
    for m in methods:
        rec = result.recommendation(kind)
        style = "bold" if rec is not None and rec.method is m else ""
        table.add_row(
            Text(m.name, style=style),
            fmt_s(m.median_s),
            _iqr(m),
            fmt_s(m.first_call_s),
            fmt_ratio(result.ratio_to_fastest(m)),
            fmt_ratio(result.speedup_vs_baseline(m)),
            fmt_percent(result.percent_vs_baseline(m)),
            *([_loss(m)] if training else []),
            _status(result, m),
        )
    table.caption = (
        f"vs {base_name} = its median / this median; seeds' % = (1 − longer/shorter) × 100, "
        f"+ when faster than {base_name}; (!) = IQR above 10 % of the median; first = "
        "the cold first call (tracing, building)"
        + ("; loss on x, y before → after the method's calls" if training else "")
    )
    table.caption_justify = "left"
    return table


def _problems(result: CompareResult, kind: str) -> list[Text]:
    return [
        Text.assemble(
            (f"  {'error' if m.error else 'mismatch'} ", "red"), (m.name, "bold"), f": {m.problem}"
        )
        for m in result.of_kind(kind)
        if m.problem is not None
    ]


def _advice(result: CompareResult) -> RenderableType:
    do, dont = result.advice()
    lines = [Text("For this model and data", style="bold")]
    lines += [Text.assemble(("  ✓ ", "green"), line) for line in do]
    lines += [Text.assemble(("  ✗ ", "red"), line) for line in dont]
    return Group(*lines)


def render_compare(result: CompareResult) -> RenderableType:
    """The whole comparison as one renderable."""
    parts: list[RenderableType] = [_header(result)]
    for kind in result.kinds:
        parts.append(_table(result, kind))
        parts += _problems(result, kind)
    noisy = [m for m in result.methods if m.noisy]
    if noisy:
        parts.append(
            Text(
                f"noise: {len(noisy)} of {len(result.methods)} methods vary by more than 10 % "
                "between blocks (!); before trusting a small difference, rerun with more "
                "repeats on a quieter machine.",
                style="yellow",
            )
        )
    parts.append(_advice(result))
    if result.notes:
        parts.append(Text("\n".join(f"note: {n}" for n in result.notes), style="dim"))
    return Group(*parts)
