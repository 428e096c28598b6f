"""Your lines without TensorFlow: the sampler's stack walk on real frames, the join of its
places with cProfile's caller edges on synthetic profiles, the record's JSON, the switches."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from synth import SITE, Node, make_report

from tfdiag.capture.lines import LineSampler, caller_line, places_of
from tfdiag.capture.switches import switch_lines
from tfdiag.records.errors import InputError
from tfdiag.records.lines import LinePlace, LinesRecord, SwitchLine
from tfdiag.render.lines_console import calls_text

USER = "/home/me/app.py"
KERAS = SITE + "keras/src/"
LOOKUP = (KERAS + "layers/preprocessing/string_lookup.py", 20, "StringLookup.__init__")
PREDICT = (KERAS + "backend/tensorflow/trainer.py", 500, "TensorFlowTrainer.predict_on_batch")
WRAP = (
    SITE + "tensorflow/python/util/traceback_utils.py",
    140,
    "filter_traceback.<locals>.error_handler",
)
HANDLE = (USER, 30, "handle")


def _handle_profile(iterations: int = 4) -> list[Node]:
    """``handle`` builds a StringLookup (0.9 s) and predicts (0.1 s) once per iteration."""
    lookup = Node(LOOKUP[0], LOOKUP[2], 0.9 * iterations, iterations, line=LOOKUP[1])
    predict = Node(PREDICT[0], PREDICT[2], 0.1 * iterations, iterations, line=PREDICT[1])
    return [Node(USER, "handle", 0.0, iterations, [lookup, predict], line=30)]


def _place(line: int, callee: Any, samples: int, api: Any = None) -> LinePlace:
    return LinePlace(USER, line, HANDLE, callee, api or callee, samples, samples * 0.005)


def _record(*places: LinePlace, source: dict[int, str] | None = None) -> LinesRecord:
    text = source or {}
    return LinesRecord(
        interval_s=0.001,
        samples=sum(p.samples for p in places),
        places=places,
        source=tuple((USER, n, t) for n, t in sorted(text.items())),
    )


def _lines(report: Any) -> Any:
    return report.diagnosis.analysis.lines


def test_a_line_takes_its_calls_and_time_from_its_caller_edge() -> None:
    lines = _record(
        _place(34, LOOKUP, 80),
        _place(36, PREDICT, 5),
        source={34: "lookup = keras.layers.StringLookup(vocabulary=VOCAB)", 36: "model(x)"},
    )
    report = make_report(_handle_profile(4), 4, lines=lines)
    first, second = _lines(report)
    assert (first.line, first.api, first.nature) == (34, "keras.layers.StringLookup", "construct")
    assert first.code == "lookup = keras.layers.StringLookup(vocabulary=VOCAB)"
    # cProfile's edge, not the samples: 0.9 of each 1.0 s iteration, once per iteration
    assert first.share == pytest.approx(0.9)
    assert first.calls_per_iteration == pytest.approx(1.0)
    assert first.exact and calls_text(first) == "1×"
    assert (second.line, second.api, second.share) == (
        36,
        "model.predict_on_batch",
        pytest.approx(0.1),
    )


def test_lines_sharing_one_edge_split_it_by_their_samples_and_say_so() -> None:
    # two lines of `handle` reach StringLookup through one wrapper edge: 3:1 by samples
    wrap = Node(WRAP[0], WRAP[2], 0.0, 8, [Node(LOOKUP[0], LOOKUP[2], 4.0, 8, line=20)], line=140)
    profile = [Node(USER, "handle", 0.0, 4, [wrap], line=30)]
    lines = _record(_place(34, WRAP, 30, LOOKUP), _place(40, WRAP, 10, LOOKUP))
    a, b = _lines(make_report(profile, 4, lines=lines))
    assert (a.line, b.line) == (34, 40)
    assert a.share == pytest.approx(0.75) and b.share == pytest.approx(0.25)
    assert a.calls_per_iteration == pytest.approx(1.5)
    assert not a.exact and calls_text(a) == "≈1.5×"
    assert a.api == "keras.layers.StringLookup"  # through the wrapper, what it calls in effect


def test_a_line_without_an_edge_takes_its_sampled_share() -> None:
    lines = _record(_place(50, None, 30), _place(34, LOOKUP, 70))
    by_line = {u.line: u for u in _lines(make_report(_handle_profile(), 4, lines=lines))}
    own = by_line[50]
    assert own.api == "" and own.calls_per_iteration is None
    assert own.share == pytest.approx(0.3)


def test_a_line_of_the_users_own_code_names_the_c_function_it_waits_in() -> None:
    sleep = Node("~", "<built-in method time.sleep>", 3.0, 4, line=0)
    profile = [Node(USER, "on_batch_end", 1.0, 4, [sleep], line=30)]
    place = LinePlace(USER, 31, (USER, 30, "on_batch_end"), None, None, 40, 0.2)
    (line,) = _lines(make_report(profile, 4, lines=_record(place)))
    assert line.api == "time.sleep" and line.calls_per_iteration == pytest.approx(1.0)
    assert line.share == pytest.approx(0.75)


def test_the_line_that_made_the_call_comes_first_and_is_not_repeated() -> None:
    fit = (KERAS + "backend/tensorflow/trainer.py", 300, "TensorFlowTrainer.fit")
    profile = [Node(fit[0], fit[2], 1.0, 4, line=300)]
    place = LinePlace(USER, 12, (USER, 1, "<module>"), fit, fit, 50, 0.25)
    report = make_report(profile, 4, lines=_record(place), call_line=(USER, 12, "model.fit(x, y)"))
    (entry,) = _lines(report)
    assert entry.entry and entry.line == 12 and entry.code == "model.fit(x, y)"


def test_nothing_recorded_gives_no_lines_and_a_record_without_a_field_reads_back() -> None:
    report = make_report(_handle_profile(), 4)
    assert _lines(report) == ()
    doc = report.to_json()
    assert doc["your_lines"] == [] and doc["lines"] is None


def test_the_record_round_trips_and_bad_rows_are_one_line(tmp_path: Path) -> None:
    lines = _record(_place(34, LOOKUP, 80), source={34: "x = 1"})
    lines = LinesRecord(
        lines.interval_s,
        lines.samples,
        lines.places,
        lines.source,
        (SwitchLine("tf-data-debug", USER, 3, "tf.data.experimental.enable_debug_mode()"),),
    )
    report = make_report(_handle_profile(), 4, lines=lines)
    path = tmp_path / "r.tfdiag.json"
    report.save(path)
    from tfdiag.results.load import load_report

    back = load_report(path)
    assert back.lines == lines
    assert _lines(back)[0].code == "x = 1"
    doc = json.loads(path.read_text())
    doc["lines"]["places"][0][1] = "34"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="line place"):
        load_report(path)


def test_the_stack_walk_keeps_the_users_lines_and_what_each_calls() -> None:
    # a stdlib frame stands for a framework's: json.dumps calls back into the user's code
    seen: list[Any] = []

    def default(obj: object) -> str:
        seen.append(places_of(sys._getframe()))
        return "x"

    def outer() -> str:
        return json.dumps(object(), default=default)

    outer()
    (found,) = seen
    (leaf_code, _, leaf_callee, _), (code, line, callee, _) = found[0], found[-1]
    assert leaf_code.co_name == "default" and leaf_callee is None  # its own line, running
    assert code.co_name == "outer" and callee is not None and "json" in callee.co_filename
    assert line == outer.__code__.co_firstlineno + 1


def test_the_sampler_ignores_the_cold_call_and_a_stack_of_tfdiags_own() -> None:
    sampler = LineSampler()
    sampler.set_call(0)
    sampler.sample()
    assert sampler.record() is None  # the cold call: build cost, not sampled
    sampler.set_call(1)
    sampler.sample()  # this test's own stack: the user's (tests/ is not a package)
    record = sampler.record()
    assert record is not None and record.samples == 1


def test_caller_line_is_the_first_user_frame() -> None:
    file, line, code = caller_line()
    assert file == __file__ and "caller_line()" in code


def test_a_live_switch_is_found_with_the_line_that_sets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import tensorflow as tf\n"
        "# tf.data.experimental.enable_debug_mode()  (a comment: not this one)\n"
        "tf.data.experimental.enable_debug_mode()\n"
        "model.compile('adam', 'mse', run_eagerly=True)\n"
    )
    mode = types.ModuleType("tensorflow.python.data.ops.debug_mode")
    mode.DEBUG_MODE = True  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tensorflow.python.data.ops.debug_mode", mode)
    found = {s.switch: s for s in switch_lines([str(script)])}
    assert (found["tf-data-debug"].line, found["run-eagerly"].line) == (3, 4)
    mode.DEBUG_MODE = False  # type: ignore[attr-defined]
    assert "tf-data-debug" not in {s.switch for s in switch_lines([str(script)])}


def test_console_and_page_show_the_lines_as_text() -> None:
    lines = _record(_place(34, LOOKUP, 80), source={34: "[bold]x[/] = <script>1</script>"})
    report = make_report(_handle_profile(), 4, lines=lines)
    text = report.render("text", width=100)
    assert "Your lines" in text and "app.py:34" in text and "[bold]x[/]" in text
    page = report.render("html")
    assert 'id="your-lines"' in page and "<script>1</script>" not in page


# -- a whole script's lines (tfdiag run) ----------------------------------------------------


def test_the_script_walk_marks_a_line_run_inside_a_loop() -> None:
    from tfdiag.capture.script_lines import script_places

    seen: list[Any] = []

    def default(obj: object) -> str:
        seen.append(script_places(sys._getframe()))
        return "x"

    def once() -> str:
        return json.dumps(object(), default=default)

    def looped() -> None:
        for _ in range(2):
            json.dumps(object(), default=default)

    once()
    looped()
    ((place_once, repeated_once),) = [p for p in seen[0] if p[0][0].co_name == "once"]
    assert place_once[2] is not None and not repeated_once
    looped_places = [p for p in seen[1] if p[0][0].co_name == "looped"]
    assert looped_places and looped_places[0][1]


def test_a_line_inside_a_comprehension_is_the_line_of_the_function_that_holds_it() -> None:
    """Under ``tfdiag run``, ``return loss, [w - 0.05 * g for w, g in zip(...)]`` was the
    ``<listcomp>``'s line, and its fix said "Compile `<listcomp>` with `jax.jit`"."""
    from tfdiag.capture.script_lines import script_places

    seen: dict[str, Any] = {}

    def default(obj: object) -> str:
        seen["script"] = script_places(sys._getframe())
        return "x"

    def holder() -> list[str]:
        return [json.dumps(object(), default=default) for _ in range(1)]

    holder()
    names = {p[0][0].co_name for p in seen["script"]}
    assert "holder" in names and "<listcomp>" not in names, names


def test_the_script_walk_stops_at_the_frame_that_runs_the_script() -> None:
    """``tfdiag run`` from a virtual environment's ``bin/tfdiag``: that console script is no
    installed package's file, so its ``sys.exit(main())`` was "your line" at 100 %. The walk
    stops at the frame that runs the script (the sampler's maker)."""
    from tfdiag.capture.script_lines import script_places

    seen: dict[str, Any] = {}

    def default(obj: object) -> str:
        seen["all"] = script_places(sys._getframe())
        seen["below"] = script_places(sys._getframe(), seen["root"])
        return "x"

    def script_body() -> None:
        json.dumps(object(), default=default)

    def runner(d: object) -> object:  # run_script: makes the sampler, runs the script
        seen["root"] = sys._getframe()
        script_body()
        return d

    def launcher() -> None:  # stands for bin/tfdiag: a user-looking line calling tfdiag
        json.loads("{}", object_hook=runner)

    launcher()
    names = {p[0][0].co_name for p in seen["all"]}
    assert {"script_body", "launcher"} <= names
    assert {p[0][0].co_name for p in seen["below"]} == names - {"launcher"}


def _script(lines: LinesRecord, sites: tuple[Any, ...] = ()) -> Any:
    from tfdiag.records.script import ScriptRecord

    return ScriptRecord(
        script="serve.py",
        argv=(),
        wall_s=10.0,
        status="ok",
        sites=sites,
        iterations=3,
        lines=lines,
    )


def _script_place(line: int, callee: Any, samples: int, repeated: int) -> LinePlace:
    return LinePlace(USER, line, HANDLE, callee, callee, samples, samples * 0.005, repeated)


SUMMARY = (SITE + "tensorflow/python/summary/tb_summary.py", 85, "histogram")


def test_a_summary_written_every_step_of_the_script_is_told_to_write_every_n_steps() -> None:
    """TF 2.21's ``tf.summary.histogram`` is tensorflow/python/summary/tb_summary.py: no row
    named it ("No rule of tfdiag names this API's cost"). A line whose API's nature has a
    remedy is a finding from MIN_SHARE (here 15 %); one with no remedy only from 25 %."""
    from tfdiag.advise.script import script_findings

    lines = LinesRecord(
        interval_s=0.005,
        samples=100,
        places=(
            _script_place(37, SUMMARY, 15, 15),
            _script_place(40, (SITE + "somepkg/mod.py", 3, "work"), 15, 15),  # no remedy
        ),
        source=((USER, 37, "tf.summary.histogram(v.path, v, step=step)"), (USER, 40, "x")),
    )
    (first,) = script_findings(_script(lines))
    assert first.finding.line is not None and first.finding.line.api == "tf.summary.histogram"
    assert "every N steps" in first.finding.fix and first.share == pytest.approx(0.15)


def test_a_layer_built_in_a_loop_of_the_script_is_its_first_finding() -> None:
    from tfdiag.advise.script import script_findings

    lines = LinesRecord(
        interval_s=0.005,
        samples=100,
        places=(
            _script_place(34, LOOKUP, 70, 70),
            _script_place(3, LOOKUP, 20, 0),  # built once, before the loop: set-up
        ),
        source=((USER, 34, "lookup = keras.layers.StringLookup(vocabulary=V)"), (USER, 3, "x")),
    )
    (first,) = script_findings(_script(lines))
    assert first.site is None and first.share == pytest.approx(0.7)
    assert first.finding.id == "model-rebuilt-per-call"
    assert first.finding.remedy == "construct"
    assert "of the script's wall time, inside a loop" in first.finding.evidence[0]
    from tfdiag.render.script_json import script_to_json

    doc = script_to_json(_script(lines))
    assert doc["findings"][0]["site"] is None and doc["findings"][0]["line"]["line"] == 34
    assert [u["line"] for u in doc["your_lines"]] == [34, 3]


def test_a_script_line_that_is_a_call_site_is_left_to_its_report() -> None:
    from tfdiag.advise.script import script_findings
    from tfdiag.records.script import CallSite

    lines = LinesRecord(interval_s=0.005, samples=100, places=(_script_place(34, PREDICT, 90, 90),))
    site = CallSite(file=USER, line=34, method="predict_on_batch", calls=30, total_s=9.0)
    assert script_findings(_script(lines, (site,))) == ()


def test_a_builtin_that_drives_an_iteration_is_transparent() -> None:
    """`n = sum(1 for _ in ds)`: cProfile sees `sum` under the line, but the work is the
    dataset read the generator runs: the line's API is the read, its function the one
    around the generator expression (where a fix moves code out of)."""
    nxt = (SITE + "tensorflow/python/data/ops/iterator_ops.py", 800, "OwnedIterator.__next__")
    read = Node(nxt[0], nxt[2], 3.0, 400, line=nxt[1])
    genexpr = Node(USER, "count.<locals>.<genexpr>", 0.1, 404, [read], line=40)
    total = Node("~", "<built-in method builtins.sum>", 0.0, 4, [genexpr], line=0)
    profile = [Node(USER, "count", 0.0, 4, [total], line=38)]
    outer = LinePlace(USER, 40, (USER, 38, "count"), None, None, 10, 0.05)
    inner = LinePlace(USER, 40, (USER, 40, "count.<locals>.<genexpr>"), nxt, nxt, 60, 0.3)
    lines = _record(outer, inner, source={40: "n = sum(1 for _ in ds)"})
    (line,) = _lines(make_report(profile, 4, lines=lines))
    assert line.api != "builtins.sum" and line.nature == "data-read", line
    assert line.function == "count"


def test_a_scripts_conclusion_ranks_after_its_fixes() -> None:
    """A site whose record shows a retrace (a fix) and compute-bound (what is left): by share
    alone the conclusion led (held-out set D: two retracing scripts were told first that
    Python-side changes won't help); it ranks after every fix, the fixes by share."""
    from tfdiag.advise.finding import Finding
    from tfdiag.advise.script import ScriptFinding, ranked

    def found(fid: str, share: float) -> ScriptFinding:
        return ScriptFinding(Finding(fid, fid, "high", share, (), ""), None, share)

    order = ranked(
        [found("compute-bound", 0.8), found("per-iteration-tracing", 0.4), found("x-rule", 0.5)]
    )
    assert [sf.finding.id for sf in order] == ["x-rule", "per-iteration-tracing", "compute-bound"]
