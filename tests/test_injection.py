"""Every string read from a file is data: no terminal escape, rich markup or HTML in a shared
report reaches a terminal, a console renderer or a browser (docs/security.md)."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from rich.console import Console
from synth import full_set_report

import tfdiag
from tfdiag.records.bench import BenchCell
from tfdiag.records.callbacks import PyCallback
from tfdiag.records.catalog import Category, Rule
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.compare import MethodResult
from tfdiag.records.probes import OpRow, Probes, SampledStack, SamplingRecord, TfProfile
from tfdiag.records.report import CallInfo, Environment
from tfdiag.records.script import CallSite
from tfdiag.records.stats import FunctionStat, ProfileStats
from tfdiag.records.traces import TraceEvent
from tfdiag.results.bench import BenchResult
from tfdiag.results.compare import CompareResult
from tfdiag.results.script import ScriptResult

#: A window title, a screen clear, an OSC 52 clipboard write, a C1 CSI, a bell, a backspace,
#: a carriage return and a right-to-left override.
CONTROL = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b31m\x08\r\u202e"
#: Invisible and layout characters (#20.17): the line and paragraph separators, zero-width
#: space, non-joiner, joiner and no-break space (BOM), word joiner, the direction marks
#: (LRM, RLM, ALM), a right-to-left isolate, a soft hyphen, a variation selector and tag
#: characters (a hidden "hi").
INVISIBLE = (
    "\u2028",
    "\u2029",
    "\u200b",
    "\u200c",
    "\u200d",
    "\ufeff",
    "\u2060",
    "\u200e",
    "\u200f",
    "\u061c",
    "\u2067",
    "\xad",
    "\ufe0f",
    "\U000e0001",
    "\U000e0068\U000e0069",
)
MARKUP = "[link=https://evil.example]click[/link] [/] [bold red]"
SCRIPT = "</script><script>alert(1)</script>"
HOSTILE = CONTROL + "".join(INVISIBLE) + MARKUP + SCRIPT
#: What must survive as text: the markup, literally.
LITERAL = "[link=https://evil.example]click[/link] [/] [bold red]"

#: Any control character but newline and tab, DEL, C1, lone surrogates, and every invisible
#: or layout character of :data:`INVISIBLE`.
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
    + "".join(c for c in "".join(INVISIBLE))
    + "]"
)
SGR = re.compile(r"\x1b\[[0-9;]*m")


def _h(tag: str) -> str:
    return f"{tag}:{HOSTILE}"


def hostile_report() -> tfdiag.Report:
    report = full_set_report()
    site = "/venv/lib/python3.11/site-packages/keras/src/"
    functions = (
        *report.profile.functions,
        FunctionStat(site + _h("file") + ".py", 1, _h("fn"), 11, 11, 0.3, 0.3),
    )
    tf = TfProfile(
        steps=2,
        iteration_s=(0.05, 0.05),
        hardware=_h("hw"),
        host_op_s=0.02,
        input_op_s=0.0,
        device_op_s=None,
        h2d_s=None,
        d2h_s=None,
        top_ops=(OpRow("Host", _h("optype"), _h("op"), 3, 0.01, 0.01),),
        op_rows=1,
        step_ms=(50.0, 50.0),
        breakdown_ms=(),
        verdict=_h("verdict"),
        advice=(_h("advice"),),
        graph_builds=0,
        graph_builds_per_step=(0, 0),
        host_tracer_level=1,
    )
    sampling = SamplingRecord(
        interval_s=0.005,
        iteration_s=(0.05,) * 10,
        frames=((site + _h("sfile"), 3, _h("sfn")),),
        stacks=(SampledStack((0,), 8, 0.04),),
    )
    return replace(
        report,
        call=CallInfo(
            label=_h("label"),
            target=_h("target"),
            method="predict",
            flavour=_h("flavour"),
            args=(_h("arg"),),
            kwargs=((_h("k"), _h("v")),),
            facts=((_h("fact"), _h("value")),),
        ),
        environment=Environment(
            python=_h("py"),
            platform=_h("os"),
            devices=(_h("dev"),),
            versions={"tensorflow": _h("tf")},
        ),
        profile=ProfileStats(functions),
        notes=(_h("note"),),
        rules=(Rule("*", _h("rulefn"), Category.OTHER, _h("why")),),
        finding_rules=(FindingRule("mine", _h("title"), "*", "*", _h("fix"), min_share=0.01),),
        probes=Probes(sampling=sampling, tf_profile=tf, trace_files=report.probes.trace_files),
        traces=(TraceEvent(1, _h("traced"), _h("tfile"), 1, _h("tname"), ((_h("p"), _h("t")),)),),
        py_callbacks=(PyCallback(_h("cb"), _h("cbfile"), 1, "py_function", 5, 0.01),),
    )


def hostile_compare() -> CompareResult:
    def m(name: str, **kw: Any) -> MethodResult:
        return MethodResult(
            name=name, method=name, call=_h("call"), kind="inference", flavour="keras3",
            eager=False, times_s=(0.01, 0.011, 0.012), **kw,
        )  # fmt: skip

    return CompareResult(
        methods=(m("predict"), m(_h("method")), m(_h("broken"), error=_h("error"))),
        model=_h("model"),
        flavour="keras3",
        data=((_h("x"), _h("shape")),),
        baselines=(("inference", "predict"),),
        environment=Environment(python=_h("py"), versions={"tensorflow": _h("tf")}),
        notes=(_h("note"),),
    )


def hostile_script() -> ScriptResult:
    site = CallSite(
        file=_h("file"), line=3, method="predict", owner=_h("owner"), code=_h("code"),
        calls=4, total_s=0.5, profiled_calls=2, call_s=(0.2, 0.1, 0.1, 0.1),
        report=hostile_report(),
    )  # fmt: skip
    return ScriptResult(
        script=_h("script"), argv=(_h("argv"),), wall_s=1.0, status=_h("status"),
        sites=(site,), iterations=1, notes=(_h("note"),),
    )  # fmt: skip


def hostile_bench() -> BenchResult:
    cells = tuple(
        BenchCell(_h("model"), _h("data"), _h("flav"), loop, _h("in"), mode, 5, (0.1, 0.1))
        for loop in ("fit", "train_on_batch")
        for mode in ("graph", "eager")
    )
    broken = replace(cells[0], input=_h("other"), error=_h("error"))
    return BenchResult(cells=(*cells, broken), environment=Environment(platform=_h("os")))


RESULTS = {
    "profile": hostile_report,
    "compare": hostile_compare,
    "script": hostile_script,
    "bench": hostile_bench,
}


def _saved_and_loaded(kind: str, tmp_path: Path) -> Any:
    written = RESULTS[kind]().save(tmp_path / "hostile.json")
    path = written[0] if isinstance(written, tuple) else written
    return path, tfdiag.load_result(path)


def _terminal(result: Any) -> str:
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system="truecolor", width=400).print(result)
    return out.getvalue()


@pytest.mark.parametrize("kind", list(RESULTS))
def test_a_hostile_file_renders_as_plain_text(kind: str, tmp_path: Path) -> None:
    path, result = _saved_and_loaded(kind, tmp_path)
    text = result.render("text", width=400)
    assert not UNSAFE.search(text), UNSAFE.findall(text)
    assert LITERAL in text  # the markup shown, not interpreted (and `[/]` did not crash it)
    terminal = _terminal(result)
    assert "\x1b]" not in terminal  # no OSC: no title, clipboard or hyperlink
    assert not UNSAFE.search(SGR.sub("", terminal)), UNSAFE.findall(SGR.sub("", terminal))
    html = result._repr_mimebundle_()["text/html"]
    assert "<script>alert" not in html and not UNSAFE.search(html)


@pytest.mark.parametrize("kind", list(RESULTS))
def test_explain_of_a_hostile_file_writes_no_control_character(kind: str, tmp_path: Path) -> None:
    path, _ = _saved_and_loaded(kind, tmp_path)
    proc = run_cli("explain", str(path))
    assert proc.returncode == 0, proc.stderr
    assert not UNSAFE.search(proc.stdout + proc.stderr)
    assert LITERAL in proc.stdout.replace("\n", "")


def test_error_lines_carry_no_control_character(tmp_path: Path) -> None:
    proc = run_cli("explain", str(tmp_path / f"{CONTROL}.tfdiag.json"))
    assert proc.returncode == 2
    assert "no such file" in proc.stderr and not UNSAFE.search(proc.stderr)


def test_the_sampling_page_embeds_every_string_as_data(tmp_path: Path) -> None:
    benign = full_set_report().save(tmp_path / "benign")
    written = hostile_report().save(tmp_path / "run")
    resaved = tfdiag.load_report(written[0]).save(tmp_path / "again")  # a loaded report too
    pages = [p for p in (*benign, *written, *resaved) if p.name.endswith(".sampling.html")]
    closing = pages[0].read_text().count("</script>")
    for page in pages[1:]:
        html = page.read_text()
        assert html.count("</script>") == closing, page  # nothing closed the data's <script>
        assert "<script>alert" not in html
    session = json.loads((tmp_path / "run.pyisession").read_text())
    assert any(SCRIPT in frame for record in session["frame_records"] for frame in record[0])


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c[0]):04X}" for c in INVISIBLE])
def test_invisible_and_layout_characters_are_stripped_from_text_views(char: str) -> None:
    report = replace(
        full_set_report(), call=CallInfo(label=f"Model{char}.predict", method="predict")
    )
    text = report.render("text", width=200)
    assert "Model.predict" in text and char not in text
    assert char not in _terminal(report)


def test_the_cleaner_removes_every_format_separator_and_control_character() -> None:
    import unicodedata

    from tfdiag.records.text import clean

    kept = {"\t", "\n"}
    for code in range(0x110000):
        char = chr(code)
        if char not in kept and unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            assert char not in clean(f"a{char}b"), f"U+{code:04X}"
    assert clean("tab\tand\nnewline, ünïcödé, 日本, 🙂") == "tab\tand\nnewline, ünïcödé, 日本, 🙂"


def test_a_dollar_sign_in_a_label_does_not_break_the_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    report = replace(full_set_report(), call=CallInfo(label=r"$\frac{1}{$ $x^{$", method="predict"))
    path = report.plot_timeline(tmp_path / "t.png")
    assert path.read_bytes().startswith(b"\x89PNG")
