"""The compare and bench tables at 80, 100 and 120 columns, on synthetic results (no TF).

Narrow consoles may wrap a method name or a header, never cut a word with "…" nor drop a
column: every method name, status, median and footnote must still be there, whole.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from test_compare_result import _m, _result

from tfdiag.records.bench import BenchCell, BenchSettings
from tfdiag.records.report import Environment
from tfdiag.records.units import fmt_s
from tfdiag.render.bench_console import render_bench
from tfdiag.render.compare_console import render_compare
from tfdiag.results.bench import BenchResult
from tfdiag.results.compare import CompareResult

WIDTHS = (80, 100, 120)


def _noisy(name: str, median_s: float, kind: str = "inference", **kw: object) -> object:
    """A method whose blocks vary by ±40 %: flagged noisy."""
    m = _m(name, median_s, kind, **kw)
    return type(m)(**{**m.__dict__, "times_s": (median_s * 0.6, median_s, median_s * 1.4)})


@pytest.fixture()
def crowded() -> CompareResult:
    """Every default method, tf_keras twins with long names, a failure and a mismatch."""
    loss = {"loss_before": 1.124, "loss_after": 1.1}
    return _result(
        _noisy("predict", 0.1138, call="model.predict(x)"),
        _m("predict(tf.data)", 0.0143),
        _m("predict_on_batch", 0.000633),
        _m("model(x)", 0.0017, eager=True),
        _m("tf.function", 0.000488),
        _m("tf.function(jit)", 0.000326),
        _noisy("uncompiled predict", 0.1236),
        _m("predict (tf_keras)", 0.09, method="predict", flavour="tf_keras"),
        _m(
            "tf.function(jit) (tf_keras)",
            None,
            method="tf.function(jit)",
            flavour="tf_keras",
            error="InvalidArgumentError: XLA cannot compile",
        ),
        _noisy("fit", 0.1448, "training", call="model.fit(x, y)", **loss),
        _m("fit eager", 0.1773, "training", eager=True, **loss),
        _m("fit(tf.data)", 0.0139, "training", **loss),
        _m("fit(tf.data) eager", 0.0405, "training", eager=True, **loss),
        _m("train_on_batch", 0.002, "training", **loss),
        _m("train_on_batch eager", 0.0216, "training", eager=True, **loss),
        _m("tf.function step", 0.0012, "training", **loss),
        _m("eager step", 0.0234, "training", eager=True, **loss),
        _m(
            "train_on_batch eager (tf_keras)",
            0.03,
            "training",
            method="train_on_batch eager",
            flavour="tf_keras",
            **loss,
        ),
        _m(
            "eager step (tf_keras)",
            0.004,
            "training",
            method="eager step",
            flavour="tf_keras",
            loss_before=1.124,
            loss_after=5.0,
            mismatch="loss rose from 1.124 to 5.000",
        ),
    )


def _print(renderable: object, width: int) -> str:
    buf = io.StringIO()
    # crop=False: a table wider than the console would show as a line longer than `width`
    Console(file=buf, width=width, color_system=None).print(renderable, crop=False)
    return buf.getvalue()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _row(lines: list[str], first: str, rest: list[str], status: str) -> bool:
    """A row starts with the name's first word; its other words and the status follow."""
    for i, line in enumerate(lines):
        if re.match(rf"{re.escape(first)}(\s|$)", line):
            cell = " ".join(lines[i : i + 4])
            if all(re.search(rf"(^|\s){re.escape(w)}(\s|$)", cell) for w in rest + [status]):
                return True
    return False


STATUS = {
    "tf.function(jit)": "★ best",
    "tf.function step": "★ best",
    "predict": "baseline",
    "fit": "baseline",
    "tf.function(jit) (tf_keras)": "error",
    "eager step (tf_keras)": "mismatch",
}


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_tables_keep_every_word_at(crowded: CompareResult, width: int) -> None:
    text = _print(render_compare(crowded), width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "…" not in text
    for m in crowded.methods:
        first, *rest = m.name.split()
        assert _row(lines, first, rest, STATUS.get(m.name, "ok")), (width, m.name)
        if m.median_s is not None:
            assert fmt_s(m.median_s) in text, (width, m.name)
    flat = _flat(text)
    for base, loss in (
        ("predict", ""),
        ("fit", "; loss on x, y before → after the method's calls"),
    ):
        assert (
            f"vs {base} = its median / this median; seeds' % = (1 − longer/shorter) × 100, "
            f"+ when faster than {base}; ! = IQR above 10 % of the median; first = the cold "
            f"first call (tracing, building){loss}"
        ) in flat
    assert text.count("1.124 →") == 10 and "5.000" in text  # loss before → after, per row
    for header in ("method", "median", "IQR", "first", "×", "fastest", "vs", "seeds'", "loss"):
        assert re.search(rf"(^|\s){re.escape(header)}(\s|$)", text), (width, header)
    assert "noise: 3 of 19 methods vary by more than 10 % between blocks (marked !)" in flat


def test_at_100_columns_the_status_stays_beside_the_method(crowded: CompareResult) -> None:
    lines = _print(render_compare(crowded), 100).splitlines()
    row = next(line for line in lines if line.startswith("tf.function step"))
    assert row.split()[2:4] == ["★", "best"] and "1.2 ms" in row
    assert any(re.match(r"predict\s+baseline\s+113\.8 ms", line) for line in lines)


def test_advice_lines_wrap_under_their_own_text(crowded: CompareResult) -> None:
    lines = _print(render_compare(crowded), 80).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  ✓ Do:"))
    assert lines[start + 1].startswith("    ") and lines[start + 1].strip()


def _bench(flavours: tuple[str, ...]) -> BenchResult:
    cells = []
    for flavour in flavours:
        for model, data in (("small", "small"), ("small", "medium"), ("medium", "medium")):
            for loop in ("fit", "train_on_batch"):
                for source in ("numpy", "tf.data"):
                    for mode in ("graph", "eager"):
                        t = (0.1 if loop == "fit" else 0.01) * (2 if mode == "eager" else 1)
                        spread = 0.3 if source == "numpy" else 0.01
                        times = (t * (1 - spread), t, t * (1 + spread))
                        cell = BenchCell(model, data, flavour, loop, source, mode, 5, times)
                        cells.append(cell)
    settings = BenchSettings(flavours=flavours, iterations=5, repeats=3)
    env = Environment(
        python="3.11", cpu_count=2, versions={"tensorflow": "2.21.0", "keras": "3.15.1"}
    )
    return BenchResult(tuple(cells), settings, env)


@pytest.mark.parametrize("flavours", [("keras3",), ("keras3", "tf_keras")])
@pytest.mark.parametrize("width", WIDTHS)
def test_bench_grid_keeps_every_word_at(width: int, flavours: tuple[str, ...]) -> None:
    result = _bench(flavours)
    text = _print(render_bench(result), width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "…" not in text
    for _, model, data, source in result.rows():
        pattern = rf"(\S+\s+)?{model}\s+{data}\s+{re.escape(source)}\s+0\.\d{{4}}"
        assert any(re.match(pattern, line) for line in lines), (width, model, data, source)
    flat = _flat(text)
    for header in ("model", "data", "input", "GvE"):
        assert header in text
    assert (
        "% = (1 − longer/shorter) × 100, the seeds' signed percent: GvE + when graph is faster; "
        "tob vs fit (graph) + when train_on_batch is faster. ! = IQR above 10 % of the median. "
        "tob = train_on_batch."
    ) in flat
    assert "+900 %" in flat  # tob vs fit: 0.01 s against 0.1 s
    if len(flavours) > 1:
        assert "tf_keras" in text and "keras3" in text
