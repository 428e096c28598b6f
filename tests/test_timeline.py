"""The iteration timeline on synthetic series: warm-up, spikes, drift, and their findings."""

from __future__ import annotations

import io
import random
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console
from synth import SITE, Node, make_report

from tfdiag.analysis.timeline import analyze_timeline, mann_kendall_z, theil_sen
from tfdiag.records.errors import InputError
from tfdiag.render.sparkline import sparkline
from tfdiag.results.report import Report

BASE_S = 0.010


def clean(n: int = 200, cv: float = 0.05, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [BASE_S * (1 + cv * rng.gauss(0, 1)) for _ in range(n)]


def report_with(times: list[float], profiled: tuple[float, ...] = ()) -> Report:
    root = Node(SITE + "keras/src/backend/tensorflow/trainer.py", "TensorFlowTrainer.predict", 0.2)
    report = make_report([root], iterations=20, iteration_s=tuple(times))
    if profiled:
        report = replace(report, timing=replace(report.timing, profiled_iteration_s=profiled))
    return report


def finding_ids(report: Report) -> list[str]:
    return [f.id for f in report.findings]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("cv", [0.02, 0.05, 0.10])
def test_clean_noisy_series_has_no_timeline_finding(seed: int, cv: float) -> None:
    timeline = analyze_timeline(clean(cv=cv, seed=seed))
    assert (timeline.warmup, timeline.spikes, timeline.drift) == (None, None, None)


def test_clean_series_yields_no_timeline_findings_in_the_report() -> None:
    ids = finding_ids(report_with(clean(seed=3)))
    assert not {"warmup", "spikes", "drift"} & set(ids)


@pytest.mark.parametrize("change", [0.30, 0.60, -0.25])
def test_injected_trend_is_found_with_its_size(change: float) -> None:
    n = 150
    times = [t * (1 + change * i / (n - 1)) for i, t in enumerate(clean(n, seed=1))]
    drift = analyze_timeline(times).drift
    assert drift is not None
    assert drift.change == pytest.approx(change, abs=0.06)
    assert (drift.z > 0) == (change > 0) and abs(drift.z) >= 3
    assert (drift.first, drift.last) == (0, n - 1)
    assert analyze_timeline(times).spikes is None


def test_small_trend_below_ten_percent_is_not_drift() -> None:
    n = 150
    times = [t * (1 + 0.04 * i / (n - 1)) for i, t in enumerate(clean(n, seed=1))]
    assert analyze_timeline(times).drift is None


def test_periodic_spikes_are_found_with_period_and_size() -> None:
    times = clean(200, seed=2)
    where = list(range(9, 200, 25))
    for i in where:
        times[i] *= 3
    spikes = analyze_timeline(times).spikes
    assert spikes is not None
    assert spikes.indices == tuple(where)
    assert spikes.period == 25
    assert spikes.size == pytest.approx(3.0, abs=0.25)
    assert spikes.excess_s == pytest.approx(len(where) * 2 * BASE_S, rel=0.15)


def test_irregular_spikes_have_no_period() -> None:
    times = clean(120, seed=4)
    where = [5, 17, 18, 60, 101]
    for i in where:
        times[i] *= 2.5
    spikes = analyze_timeline(times).spikes
    assert spikes is not None
    assert spikes.indices == tuple(where)
    assert spikes.period is None


def test_spikes_on_top_of_drift_are_measured_against_the_trend() -> None:
    n = 200
    times = [t * (1 + 0.5 * i / (n - 1)) for i, t in enumerate(clean(n, seed=5))]
    for i in (40, 90, 140, 190):
        times[i] *= 2.2
    timeline = analyze_timeline(times)
    assert timeline.drift is not None and timeline.drift.change == pytest.approx(0.5, abs=0.08)
    assert timeline.spikes is not None and timeline.spikes.indices == (40, 90, 140, 190)
    assert timeline.spikes.size == pytest.approx(2.2, abs=0.25)


def test_warmup_is_the_leading_slow_iterations() -> None:
    times = clean(60, seed=6)
    times[:3] = [0.5, 0.05, 0.02]
    timeline = analyze_timeline(times)
    warmup = timeline.warmup
    assert warmup is not None and warmup.iterations == 3
    assert warmup.excess_s == pytest.approx(0.57 - 3 * BASE_S, rel=0.02)
    assert timeline.spikes is None and timeline.drift is None


def test_a_slow_first_half_is_not_warmup() -> None:
    times = [0.03] * 40 + clean(30, seed=7)
    assert analyze_timeline(times).warmup is None


def test_short_or_invalid_series_yield_nothing() -> None:
    assert analyze_timeline([0.01, 0.5, 0.01]).spikes is None
    assert analyze_timeline([0.01] * 7 + [1.0]).n == 8
    bad = analyze_timeline([0.01] * 10 + [float("nan")])
    assert (bad.warmup, bad.spikes, bad.drift) == (None, None, None)


def test_long_series_are_reduced_to_blocks_and_still_found() -> None:
    n = 20_000
    times = [t * (1 + 0.2 * i / (n - 1)) for i, t in enumerate(clean(n, seed=8))]
    drift = analyze_timeline(times).drift
    assert drift is not None and drift.change == pytest.approx(0.2, abs=0.04)


def test_theil_sen_ignores_outliers_and_mann_kendall_has_the_trend_sign() -> None:
    xs = [float(i) for i in range(20)]
    ys = [2.0 + 0.5 * x for x in xs]
    ys[3], ys[11] = 100.0, -50.0
    slope, intercept = theil_sen(xs, ys)
    assert slope == pytest.approx(0.5) and intercept == pytest.approx(2.0)
    assert mann_kendall_z(list(range(10))) > 3 > 0 > -3 > mann_kendall_z(list(range(10, 0, -1)))


def test_findings_carry_the_numbers() -> None:
    n = 100
    times = [t * (1 + 0.4 * i / (n - 1)) for i, t in enumerate(clean(n, seed=9))]
    for i in range(4, n, 12):
        times[i] *= 3
    times[0] = 0.4
    report = report_with(times)
    found = {f.id: f for f in report.findings}
    assert {"warmup", "spikes", "drift"} <= set(found)
    change = re.search(r"([+-]\d+) % over the run", found["drift"].evidence[0])
    assert change is not None and int(change.group(1)) == pytest.approx(40, abs=6)
    assert "every 12 iterations" in found["spikes"].evidence[0]
    assert "at iteration 5, 17, 29" in found["spikes"].evidence[0]
    assert "the first 1 of 100" in found["warmup"].evidence[0]
    assert all(0 < found[k].impact <= 1 for k in ("warmup", "spikes", "drift"))


def test_profiled_times_are_read_when_unprofiled_ones_are_too_few() -> None:
    profiled = tuple(t * (1 + 0.5 * i / 39) for i, t in enumerate(clean(40, seed=10)))
    found = {f.id: f for f in report_with([0.01, 0.01], profiled).findings}
    assert "drift" in found and "profiled iterations" in found["drift"].evidence[0]


def test_sparkline_scales_min_to_max_and_bins_by_maximum() -> None:
    assert sparkline([1, 2, 3, 4, 5, 6, 7, 8]) == "▁▂▃▄▅▆▇█"
    assert sparkline([1.0, 1.0, 1.0]) == "▁▁▁"
    assert sparkline([]) == ""
    line = sparkline([1.0] * 100 + [9.0] + [1.0] * 99, width=20)
    assert len(line) == 20 and line.count("█") == 1 and set(line) == {"▁", "█"}


def test_console_header_shows_the_sparkline() -> None:
    times = clean(30, seed=11)
    times[10] = 0.05
    buf = io.StringIO()
    report_with(times).show(Console(file=buf, width=120, color_system=None))
    trend = next(line for line in buf.getvalue().splitlines() if "trend" in line)
    assert sparkline(times) in trend and "in run order" in trend


def test_plot_timeline_writes_a_png_and_never_overwrites(tmp_path: Path) -> None:
    times = clean(80, seed=12)
    times[5] = 0.05
    report = report_with(times)
    path = tmp_path / "t.png"
    assert report.plot_timeline(path) == path
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(InputError, match="exists"):
        report.plot_timeline(path)
    report.plot_timeline(path, overwrite=True)
    with pytest.raises(InputError, match="ending in .png"):
        report.plot_timeline(tmp_path / "t.jpg")


def test_plot_without_matplotlib_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(InputError) as info:
        report_with(clean(20)).plot_timeline(tmp_path / "t.png")
    assert str(info.value) == (
        "plotting needs matplotlib, which is not installed: pip install matplotlib"
    )
    assert not (tmp_path / "t.png").exists()


def test_plot_of_a_report_without_times_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no per-iteration times"):
        report_with([]).plot_timeline(tmp_path / "t.png")


def test_a_clipped_cold_iteration_is_named_in_the_legend_not_over_the_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # #12: the "↑ 337.5 ms" label was drawn in the plot, on the line falling from it.
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from tfdiag.render.plot import timeline_png

    figures: list[Figure] = []
    savefig = Figure.savefig

    def keep(self: Figure, *args: object, **kwargs: object) -> None:
        figures.append(self)
        savefig(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    times = [0.3375, *clean(40, seed=3)]
    timeline_png(report_with(times).diagnosis)
    (ax,) = figures[0].axes
    assert list(ax.texts) == []  # nothing written inside the plot area
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("#1 ↑ 337.5 ms" in t for t in legend), legend
    assert ax.get_ylim()[1] < 337.5  # still clipped, so the rest is not flattened


# -- the machine's load (#18): timeline findings are about the program, not the machine ------

LONG_S = 0.05  # iterations long enough for per-iteration load figures to count


def _spiky(n: int = 40) -> list[float]:
    times = [LONG_S * (1 + 0.02 * random.Random(k).gauss(0, 1)) for k in range(n)]
    for i in (5, 13, 22, 34):  # irregular
        times[i] = LONG_S * 3
    return times


def _loaded(report: Report, other: float, per_iteration: tuple[float, ...] = ()) -> Report:
    from tfdiag.records.machine import MachineLoad

    return replace(report, machine=MachineLoad(2, other, per_iteration=per_iteration))


def test_irregular_spikes_on_a_busy_machine_are_the_machines() -> None:
    report = report_with(_spiky())
    assert "spikes" in finding_ids(report)  # no load measured: as before
    assert "spikes" in finding_ids(_loaded(report, 0.1))  # a quiet machine: the program's
    busy = _loaded(report, 1.6)
    assert "spikes" not in finding_ids(busy)
    text = busy.render("text", width=100)
    assert "irregular spikes left out: the machine was busy" in text
    assert "busy: 1.6 of 2 cores busy with other processes" in text  # said in the header


def test_periodic_spikes_stay_on_a_busy_machine() -> None:
    times = [LONG_S] * 60
    for i in range(4, 60, 8):
        times[i] = LONG_S * 3
    assert "spikes" in finding_ids(_loaded(report_with(times), 1.6))


def test_spikes_that_come_with_a_burst_of_other_cpu_are_left_out_on_a_quiet_machine() -> None:
    times = _spiky()
    load = tuple(1.5 if i in (5, 13, 22, 34) else 0.0 for i in range(len(times)))
    assert "spikes" not in finding_ids(_loaded(report_with(times), 0.3, load))
    steady = tuple(0.1 for _ in times)
    assert "spikes" in finding_ids(_loaded(report_with(times), 0.3, steady))


def _rising(n: int = 40) -> list[float]:
    return [LONG_S * (1 + 0.6 * i / n) for i in range(n)]


def test_a_drift_that_follows_the_load_is_left_out_one_that_holds_without_it_stays() -> None:
    times = _rising()
    # the load rises with the times: on the quieter half the trend is gone
    follows = [LONG_S * (1 + (0.6 if i >= 20 else 0.0)) for i in range(40)]
    load_rises = tuple(0.0 if i < 20 else 1.8 for i in range(40))
    assert "drift" not in finding_ids(_loaded(report_with(follows), 0.9, load_rises))
    # the load is random: the trend holds on the iterations with the least load
    noise = tuple(1.8 * (k % 2) for k in range(40))
    assert "drift" in finding_ids(_loaded(report_with(times), 0.9, noise))
    # busy, and no per-iteration load to hold it against: not said
    assert "drift" not in finding_ids(_loaded(report_with(times), 0.9))


def test_a_run_that_speeds_up_is_low_and_only_a_gpu_record_is_told_of_its_clocks() -> None:
    """Iterations getting faster is a run that had not settled: its only advice is how to
    time it, so it informs (`low`), as a warm-up does; set E's healthy serving control had
    it `[medium]`. A slowing run is told to check a GPU's clocks only when it ran on one."""
    falling = report_with(list(reversed(_rising())))
    (drift,) = [f for f in falling.findings if f.id == "drift"]
    assert drift.impact >= 0.1 and drift.severity == "low"
    assert drift.fix.startswith("Iterations speed up")
    rising = report_with(_rising())
    (cpu,) = [f for f in rising.findings if f.id == "drift"]
    assert cpu.severity != "low" and "nvidia-smi" not in cpu.fix and "GPU" not in cpu.fix
    env = replace(rising.environment, devices=("CPU:/physical_device:CPU:0", "GPU:0"))
    (gpu,) = [f for f in replace(rising, environment=env).findings if f.id == "drift"]
    assert "nvidia-smi -q -d CLOCK,TEMPERATURE" in gpu.fix


def test_timeline_findings_rank_below_a_steady_cause_of_the_same_severity() -> None:
    from tfdiag.advise import SEVERITIES

    root = Node(SITE + "keras/src/backend/tensorflow/trainer.py", "TensorFlowTrainer.predict", 0.2)
    report = make_report([root], iterations=20, iteration_s=tuple(_rising()))
    found = report.findings
    ranks = [SEVERITIES.index(f.severity) for f in found]
    assert ranks == sorted(ranks)


def test_the_timeline_reads_the_plain_calls_not_the_traced_ones() -> None:
    from tfdiag.analysis.timeline import timeline_series

    times = [LONG_S * 4] * 5 + [LONG_S] * 20  # the 5 traced calls are slower
    report = report_with(times)
    report = replace(report, timing=replace(report.timing, traced=5))
    series, what, start = timeline_series(report.timing)
    assert series == tuple(times[5:]) and start == 5 and what.startswith("plain")
    assert "warmup" not in finding_ids(report)  # the TF profiler's cost is not a warm-up
    text = report.render("text", width=120)
    assert "median of 20 plain call(s)" in text
    assert "5 more under the TF profiler" in text


def test_machine_load_and_native_log_survive_save_and_load(tmp_path: Path) -> None:
    import tfdiag
    from tfdiag.records.machine import NativeLog

    report = _loaded(report_with(_spiky()), 1.2, (0.5,) * 40)
    report = replace(report, native_log=NativeLog(("I0000 x.cc:1] kept",), 7))
    path = report.save(tmp_path / "r", overwrite=False)[0]
    back = tfdiag.load_report(path)
    assert back.machine == report.machine and back.native_log == report.native_log
    assert "wrote 7 native log line(s)" in back.render("text", width=120)


def test_a_short_series_drift_holds_on_its_quieter_half_when_it_is_real() -> None:
    # 15 plain calls (20 timed, 5 traced): half of them is too few for Mann–Kendall's |z| ≥ 3,
    # yet a drift of +150 % that the load does not follow is the program's (drift-growing-
    # history on a busy machine got no finding at all).
    rng = random.Random(3)
    times = [LONG_S * (1 + 1.5 * i / 15) * (1 + 0.15 * rng.gauss(0, 1)) for i in range(15)]
    load = tuple(1.9 if k % 2 else 0.6 for k in range(15))
    assert "drift" in finding_ids(_loaded(report_with(times), 1.2, load))
