"""The probes' part of the console view: their cost, op-level figures, the sampled breakdown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tfdiag.analysis.pipeline import Analysis
from tfdiag.analysis.probe_figures import ProbeFigures
from tfdiag.records.catalog import Category
from tfdiag.records.probes import TfProfile
from tfdiag.records.units import fmt_pct, fmt_s
from tfdiag.render.names import NamedRows, op_parts
from tfdiag.render.safe import labelled

if TYPE_CHECKING:
    from tfdiag.advise.diagnosis import Diagnosis
    from tfdiag.records.report import RunRecord

#: Op rows shown (the report keeps more).
TOP_OPS_SHOWN = 8
#: Above this IQR / median of the unprofiled pass, the probe costs are flagged as noisy.
NOISY_IQR = 0.15


def _overhead(report: RunRecord, figures: ProbeFigures) -> Text:
    t = report.timing
    line = " · ".join(f"{name} ×{ratio:.2f}" for name, ratio in figures.slowdowns)
    text = Text.assemble(
        ("Probe cost ", "bold"),
        f"(each pass's median iteration / the unprofiled median): {line}",
    )
    median, iqr = t.median_s, t.iqr_s
    if median and iqr is not None and iqr / median > NOISY_IQR:
        text.append(
            f"  (! noisy: the unprofiled iterations' IQR is {fmt_pct(iqr / median)} of their "
            "median; one pass per probe — benchmarks/overhead.py interleaves)",
            style="yellow",
        )
    return text


def _op_lines(figures: ProbeFigures, tf: TfProfile) -> list[Text]:
    ops = figures.ops
    if ops is None:
        return []
    lines = [
        _line(
            "TF ops",
            f"the model's ops {fmt_s(ops.compute_s)} per iteration of {fmt_s(ops.wall_s)} wall "
            f"({fmt_pct(ops.compute_share)}); outside them (Python, framework, waiting for "
            f"input): {fmt_pct(ops.overhead_share)}",
        )
    ]
    if ops.input_s > 0:
        lines.append(
            _line(
                "tf.data",
                f"{fmt_s(ops.input_s)} per iteration of tf.data (input pipeline) ops, on its own "
                "threads: not counted as the model's op time",
            )
        )
    if ops.collective_s > 0:
        kinds = ", ".join(
            f"{op_type} {fmt_s(own / tf.steps)}" for op_type, _, own in tf.collective_ops[:3]
        )
        lines.append(
            _line(
                "collectives",
                f"{fmt_s(ops.collective_s)} per iteration in collective ops (all-reduce, "
                f"broadcast: exchanging with the other replicas, waiting for them included)"
                + (f": {kinds}" if kinds else ""),
            )
        )
    if ops.device_s is None:
        lines.append(
            _line(
                "device",
                f"no device: every op ran on the host ({tf.hardware}); no device op time, no "
                "host↔device copies",
            )
        )
    else:
        lines.append(
            _line(
                "device",
                f"device ops {fmt_s(ops.device_s)} · host ops {fmt_s(tf.host_op_s / tf.steps)} · "
                f"host↔device copies {fmt_s(ops.copy_s)} per iteration "
                f"(H→D {fmt_s((tf.h2d_s or 0) / tf.steps)}, "
                f"D→H {fmt_s((tf.d2h_s or 0) / tf.steps)})",
            )
        )
    if tf.step_ms:
        ms = [m / 1e3 for m in tf.step_ms]
        lines.append(
            _line(
                "steps",
                f"XProf: {len(ms)} steps, mean {fmt_s(sum(ms) / len(ms))}, "
                f"min {fmt_s(min(ms))}, max {fmt_s(max(ms))}",
            )
        )
    if tf.verdict:
        lines.append(_line("XProf says", f"“{tf.verdict}”"))
    check = figures.retracing
    if check is not None:
        where = f" (`{check.function}`, {check.classification})" if check.function else ""
        verdict: tuple[str | tuple[str, str], ...] = (
            ("they agree",)
            if check.agree
            else (
                ("they disagree", "red"),
                ": the trace counts every graph built during the traced pass, the call counts "
                "come from the cProfile pass — retracing that depends on the inputs or the "
                "iteration shows up as such a difference",
            )
        )
        lines.append(
            _line(
                "retracing",
                f"trace: {check.trace_per_step:.2g} tf.function graph builds per step; call "
                f"counts: {check.calls_per_iteration:.2g} traces per iteration{where}; ",
                *verdict,
            )
        )
    for c in tf.xla_compiles[:2]:
        lines.append(
            _line(
                "XLA",
                f"`{c.function}` compiled {c.count}× ({fmt_s(c.seconds / max(c.count, 1))} "
                f"each) in {c.steps} of {tf.steps} traced steps: one executable per concrete "
                "input shape",
            )
        )
    return lines


def _line(label: str, *parts: str | tuple[str, str]) -> Text:
    return labelled(label, *parts, width=11)


def _top_ops(tf: TfProfile) -> NamedRows:
    rows = tuple(
        (
            op.name,
            (
                op.type,
                op.host_or_device.lower(),
                fmt_s(op.self_s / tf.steps),
                fmt_pct(op.self_s / tf.op_s if tf.op_s else 0.0),
            ),
        )
        for op in tf.top_ops[:TOP_OPS_SHOWN]
    )
    return NamedRows(
        title=f"Top TF ops by self time (TF profiler, {tf.steps} traced steps, "
        f"{tf.op_rows} ops in all)",
        name_header="op",
        headers=("type", "where", "per iteration", "% of op time"),
        rows=rows,
        right=frozenset({2, 3}),
        split=op_parts,
    )


def _sampled(report: RunRecord, a: Analysis, figures: ProbeFigures) -> RenderableType | None:
    shares = figures.sampled_shares
    record = report.probes.sampling if report.probes is not None else None
    if record is None:
        return None
    if shares is None:
        return Text(
            f"sampling: no sample fell inside the call ({len(record.iteration_s)} calls, each "
            f"shorter than the {fmt_s(record.interval_s)} interval); profile more iterations",
            style="dim",
        )
    table = Table(
        title="Second breakdown — sampled stacks, each sample to its nearest culprit "
        "(non-overlapping), beside cProfile's",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("category")
    table.add_column("sampling", justify="right")
    table.add_column("cProfile (steady)", justify="right")
    cats = [c for c in Category if c is not Category.WRAPPER]
    cats = [c for c in cats if shares.get(c, 0.0) > 0 or a.steady_share(c) > 0]
    cats.sort(key=lambda c: shares.get(c, 0.0), reverse=True)
    for cat in cats:
        table.add_row(cat.label, fmt_pct(shares.get(cat, 0.0)), fmt_pct(a.steady_share(cat)))
    table.caption = (
        f"{record.samples} samples every {fmt_s(record.interval_s)} over "
        f"{len(record.iteration_s)} calls ({fmt_s(record.sampled_s)} sampled)"
    )
    table.caption_justify = "left"
    return table


def render_probes(d: Diagnosis) -> RenderableType | None:
    """The probes section, or ``None`` when no probe ran."""
    report, figures = d.record, d.probe_figures
    probes = report.probes
    if probes is None or figures is None:
        return None
    parts: list[RenderableType] = [_overhead(report, figures)]
    tf = probes.tf_profile
    if tf is not None:
        lines = _op_lines(figures, tf)
        if lines:
            parts.append(Text("\n").join(lines))
        if tf.top_ops:
            parts.append(_top_ops(tf))
    sampled = _sampled(report, d.analysis, figures)
    if sampled is not None:
        parts.append(sampled)
    return Group(*parts)
