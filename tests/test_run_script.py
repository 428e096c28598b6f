"""``tfdiag run script.py``: call sites, restoring Keras, the saved ``script`` result."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from fake_keras import FakeModel
from rich.console import Console

from tfdiag.advise.evidence import rebuilt_between_calls
from tfdiag.records.errors import InputError
from tfdiag.results.load import load_result
from tfdiag.results.report import Report
from tfdiag.results.script import ScriptResult
from tfdiag.script import instrument
from tfdiag.script.instrument import METHODS, run_script

ORIGINALS = {name: FakeModel.__dict__[name] for name in METHODS}


@pytest.fixture()
def fake_keras(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(instrument, "model_classes", lambda: [FakeModel])


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def sites_by_key(result: ScriptResult) -> dict[tuple[str, int, str], Any]:
    return {(s.file, s.line, s.method): s for s in result.sites}


SCRIPT = """
import helper
from fake_keras import FakeModel

model = FakeModel()
for _ in range(6):
    model.predict(1)
helper.predict_twice(model)
model.fit(1, epochs=3)
model.predict_on_batch(1)
"""
HELPER = """
def predict_twice(model):
    model.predict(1)
    model.predict(1)
"""


def test_calls_are_charged_to_the_users_lines(tmp_path: Path, fake_keras: None) -> None:
    write(tmp_path, "helper.py", HELPER)
    script = write(tmp_path, "script.py", SCRIPT)
    result = run_script(script, iterations=2, tf_profiler=False)
    sites = sites_by_key(result)
    assert {k: s.calls for k, s in sites.items()} == {
        ("script.py", 6, "predict"): 6,
        ("helper.py", 2, "predict"): 1,
        ("helper.py", 3, "predict"): 1,
        ("script.py", 8, "fit"): 1,  # its evaluate/predict calls belong to it
        ("script.py", 9, "predict_on_batch"): 1,
    }
    loop = sites[("script.py", 6, "predict")]
    assert loop.code == "model.predict(1)" and loop.owner == "FakeModel"
    assert loop.profiled_calls == 3 and len(loop.call_s) == 6
    assert loop.total_s == pytest.approx(sum(loop.call_s))
    totals = [site.total_s for site in result.sites]
    assert totals == sorted(totals, reverse=True)  # the most time first (timing decides which)
    assert result.share(loop) == pytest.approx(loop.total_s / result.wall_s)
    assert 0 < result.keras_s < result.wall_s and result.ok and result.overhead_s > 0
    assert all(FakeModel.__dict__[n] is ORIGINALS[n] for n in METHODS)


def test_costly_sites_keep_their_profile(tmp_path: Path, fake_keras: None) -> None:
    write(tmp_path, "helper.py", HELPER)
    result = run_script(write(tmp_path, "script.py", SCRIPT), iterations=2, tf_profiler=False)
    loop = sites_by_key(result)[("script.py", 6, "predict")]
    assert isinstance(loop.report, Report)
    assert (loop.report.timing.iterations, loop.report.timing.profiled_calls) == (2, 3)
    assert len(loop.report.timing.iteration_s) == 3  # the unprofiled calls
    predicts = [f for f in loop.report.profile.functions if f.name == "FakeModel.predict"]
    assert [f.calls for f in predicts] == [3]
    cheap = sites_by_key(result)[("script.py", 9, "predict_on_batch")]
    assert cheap.report is None and result.share(cheap) < 0.05


def test_run_records_the_machine_load_over_a_sites_timed_calls(
    tmp_path: Path, fake_keras: None
) -> None:
    """The timed pass's probes reach ``tfdiag run`` as they reach profile() and the fit
    callback: a costly site's report has the machine's load, one window per timed call."""
    write(tmp_path, "helper.py", HELPER)
    result = run_script(write(tmp_path, "script.py", SCRIPT), iterations=2, tf_profiler=False)
    report = sites_by_key(result)[("script.py", 6, "predict")].report
    assert report is not None and report.machine is not None
    assert report.machine.cpus >= 1 and report.machine.other_cores >= 0
    assert len(report.machine.per_iteration) == len(report.timing.iteration_s) == 3
    assert report.to_json()["machine"]["cpus"] == report.machine.cpus


def test_iterations_zero_times_without_profiling(tmp_path: Path, fake_keras: None) -> None:
    write(tmp_path, "helper.py", HELPER)
    result = run_script(write(tmp_path, "script.py", SCRIPT), iterations=0, tf_profiler=False)
    assert all(s.profiled_calls == 0 and s.report is None for s in result.sites)
    assert sum(s.calls for s in result.sites) == 10


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ("raise ValueError('bad input')", "raised ValueError: bad input"),
        ("import sys; sys.exit(3)", "exit 3"),
        ("import sys; sys.exit(0)", "ok"),
        ("raise KeyboardInterrupt", "interrupted (KeyboardInterrupt)"),
    ],
)
def test_keras_is_restored_however_the_script_ends(
    tmp_path: Path, fake_keras: None, capsys: Any, body: str, status: str
) -> None:
    script = write(
        tmp_path, "s.py", f"from fake_keras import FakeModel\nFakeModel().predict(1)\n{body}\n"
    )
    argv, path = list(sys.argv), list(sys.path)
    result = run_script(script, ["--flag"])
    assert result.status == status
    assert all(FakeModel.__dict__[n] is ORIGINALS[n] for n in METHODS)
    assert (sys.argv, sys.path) == (argv, path)
    assert [s.calls for s in result.sites] == [1]
    if status.startswith("raised"):
        err = capsys.readouterr().err
        assert 's.py", line 3' in err and "runpy" not in err and "ValueError: bad input" in err


def test_the_script_gets_its_own_argv_and_main(tmp_path: Path, fake_keras: None) -> None:
    out = tmp_path / "argv.json"
    script = write(
        tmp_path,
        "a.py",
        f"""
        import json, sys
        if __name__ == "__main__":
            with open({str(out)!r}, "w") as fh:
                json.dump(sys.argv, fh)
        """,
    )
    run_script(script, ["x", "--y", "-n", "3"])
    assert json.loads(out.read_text()) == [str(script), "x", "--y", "-n", "3"]


def test_bad_input(tmp_path: Path, fake_keras: None) -> None:
    with pytest.raises(InputError, match="no such script"):
        run_script(tmp_path / "missing.py")
    with pytest.raises(InputError, match="between 0 and"):
        run_script(write(tmp_path, "s.py", "pass\n"), iterations=-1)


def test_saved_result_round_trips_and_explain_renders_it(tmp_path: Path, fake_keras: None) -> None:
    write(tmp_path, "helper.py", HELPER)
    result = run_script(
        write(tmp_path, "script.py", SCRIPT), ["--epochs", "2"], iterations=2, tf_profiler=False
    )
    path = result.save(tmp_path / "run.tfdiag.json")
    with pytest.raises(InputError, match="exists"):
        result.save(path)
    loaded = load_result(path)
    assert isinstance(loaded, ScriptResult)
    assert loaded.to_json() == json.loads(path.read_text())
    assert [(s.location, s.calls, s.total_s) for s in loaded.sites] == [
        (s.location, s.calls, s.total_s) for s in result.sites
    ]
    assert loaded.sites[0].report is not None
    assert loaded.sites[0].report.timing == result.sites[0].report.timing  # type: ignore[union-attr]

    text = run_cli("explain", str(path), "--width", "120")
    assert text.returncode == 0, text.stderr
    assert "tfdiag run · " in text.stdout and "script.py:6" in text.stdout
    assert "Keras calls by call site" in text.stdout
    doc = json.loads(run_cli("explain", str(path), "--format", "json").stdout)
    assert doc["kind"] == "script" and doc["schema_version"] == 1
    # the sites in the saved order (costliest first: timing decides, not the test)
    locations = [site["location"] for site in doc["sites"]]
    assert locations == [site.location for site in result.sites] and "script.py:6" in locations
    assert doc["argv"] == ["--epochs", "2"]
    plot = run_cli("explain", str(path), "--plot", str(tmp_path / "p.png"))
    assert plot.returncode == 2 and "profile reports only" in plot.stderr


def test_console_view_lists_sites_with_share(tmp_path: Path, fake_keras: None) -> None:
    write(tmp_path, "helper.py", HELPER)
    result = run_script(write(tmp_path, "script.py", SCRIPT), iterations=2, tf_profiler=False)
    buf = io.StringIO()
    result.show(Console(file=buf, width=140, color_system=None))
    text = buf.getvalue()
    loop = next(site for site in result.sites if site.location == "script.py:6")
    row = next(
        line
        for line in text.splitlines()
        if "script.py:6 · " in line and "of the script" not in line
    )
    assert "FakeModel.predict" in row and f"{100 * result.share(loop):.1f} %" in row
    assert "Costly call sites" in text and "   model.predict(1)" in text


# -- real TensorFlow ------------------------------------------------------------------

PREDICT_LOOP = """
import json, sys, time
import numpy as np
from tfdiag.measure.seed_models import tiny_model

model = tiny_model(sys.argv[1])
x = np.zeros((32, 4), "float32")
model.predict_on_batch(x)
t0 = time.perf_counter()
for _ in range(int(sys.argv[2])):
    preds = model.predict(x, verbose=0)
json.dump({"loop_s": time.perf_counter() - t0}, open(sys.argv[3], "w"))
print("done", preds.shape)
"""


@pytest.mark.tf
def test_run_names_the_predict_loop_line_and_its_share(tmp_path: Path) -> None:
    import keras

    owner = keras.Model.__mro__[1]
    before = {n: owner.__dict__[n] for n in METHODS}
    script = write(tmp_path, "train.py", PREDICT_LOOP)
    result = run_script(script, ["keras3", "6", str(tmp_path / "t.json")], iterations=2)
    assert {n: owner.__dict__[n] for n in METHODS} == before
    top = result.sites[0]
    assert (top.location, top.method, top.calls) == ("train.py:10", "predict", 6)
    assert top.code == "preds = model.predict(x, verbose=0)"
    loop_s = json.loads((tmp_path / "t.json").read_text())["loop_s"]
    # the site's time is the loop's time, less the loop's own Python and tfdiag's bookkeeping
    assert 0 < result.overhead_s < loop_s
    assert 0.9 * (loop_s - result.overhead_s) <= top.total_s <= loop_s
    assert result.share(top) == pytest.approx(top.total_s / result.wall_s)
    other = next(s for s in result.sites if s.method == "predict_on_batch")
    assert other.location == "train.py:7" and result.share(other) < result.share(top)
    assert top.report is not None
    assert "per-call-input-pipeline" in [f.id for f in top.report.findings]


@pytest.mark.tf
def test_run_cli_json_on_tf_keras(tmp_path: Path) -> None:
    script = write(tmp_path, "train.py", PREDICT_LOOP)
    out = tmp_path / "run.json"
    proc = run_cli(
        "run", "--format", "json", "--iterations", "2", "--out", str(out),
        str(script), "tf_keras", "4", str(tmp_path / "t.json"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # the script's own print went to stderr
    assert "done (32, 1)" in proc.stderr
    loop = next(s for s in doc["sites"] if s["method"] == "predict")
    assert (loop["location"], loop["calls"], loop["flavour"]) == ("train.py:10", 4, "tf_keras")
    assert loop["share"] == pytest.approx(loop["total_s"] / doc["wall_s"])
    assert json.loads(out.read_text()) == doc


@pytest.mark.tf
def test_run_out_is_saved_where_the_command_was_typed_though_the_script_chdirs(
    tmp_path: Path,
) -> None:
    (tmp_path / "data").mkdir()
    theirs = tmp_path / "data" / "report.json"
    theirs.write_text("the user's own data\n")
    write(tmp_path, "train.py", "import os\nos.chdir('data')\nprint('in', os.getcwd())\n")
    proc = run_cli("run", "--out", "report.json", "--force", "train.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert theirs.read_text() == "the user's own data\n"
    assert json.loads((tmp_path / "report.json").read_text())["kind"] == "script"


@pytest.mark.tf
def test_run_cli_exit_codes(tmp_path: Path) -> None:
    failing = write(tmp_path, "fail.py", "raise SystemExit(4)\n")
    proc = run_cli("run", str(failing))
    assert proc.returncode == 1 and "exit 4" in proc.stdout
    missing = run_cli("run", str(tmp_path / "nope.py"))
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines()[-1].startswith("tfdiag: error: ")
    assert "nope.py: no such script" in missing.stderr


PY_FUNCTION_FIT = """
import time
import numpy as np
import tensorflow as tf
from tfdiag.measure.seed_models import tiny_model

def slow(v):
    time.sleep(0.002)  # a blocking read, in Python, for every element
    return v

x = np.zeros((64, 4), "float32")
y = np.zeros((64, 1), "float32")
ds = tf.data.Dataset.from_tensor_slices((x, y)).map(
    lambda a, b: (tf.ensure_shape(tf.py_function(slow, [a], tf.float32), (4,)), b)
).batch(16)
model = tiny_model("keras3")
for _ in range(7):
    model.fit(ds, epochs=1, verbose=0)
"""


@pytest.mark.tf
def test_run_traces_a_costly_site_with_the_tf_profiler(tmp_path: Path) -> None:
    script = write(tmp_path, "train.py", PY_FUNCTION_FIT)
    result = run_script(script, iterations=2)
    top = result.sites[0]
    report = top.report
    assert report is not None and top.calls == 7
    # call 1 diagnosed by the callback inside it; calls 2-4 under cProfile, the next one
    # under the TF profiler, the other 2 timed
    assert report.probes is not None and report.probes.tf_profile is not None
    assert len(report.timing.iteration_s) == 2
    assert any("call 5 ran under the TF profiler" in n for n in report.notes), report.notes
    # the timed pass's machine load, one window per timed call, as the timeline reads
    assert report.machine is not None and len(report.machine.per_iteration) == 2
    assert any("calls 2–4 ran under cProfile" in n for n in report.notes), report.notes
    assert report.findings[0].id == "input-bound"
    # the Python the pipeline calls back was timed on the unprofiled calls
    assert report.py_callbacks and report.py_callbacks[0].function.endswith("slow")


REBUILT = """
from fake_keras import FakeModel

class Model(FakeModel):
    predict_function = None

    def compile(self):
        self.predict_function = None  # as Keras' compile() resets the compiled step

    def predict(self, x, work=30_000):  # run's wrapper is on FakeModel.predict, below
        try:
            return super().predict(x, work)
        finally:
            self.predict_function = "traced"

kept, other = Model(), Model()
for _ in range(6):
    {body}
"""


@pytest.mark.parametrize(
    ("body", "new", "recompiled", "kind"),
    [
        ("kept.compile(); kept.predict(1)", 0, 5, "compile"),
        ("Model().predict(1)", 5, 0, "model"),
        # Two models called in turn at one line: each keeps its compiled step (only the
        # second one's first call finds none).
        ("for m in (kept, other): m.predict(1)", 1, 0, None),
    ],
    ids=["recompiled", "new-model", "two-models-in-turn"],
)
def test_run_sees_a_model_rebuilt_or_recompiled_between_a_sites_calls(
    tmp_path: Path, fake_keras: None, body: str, new: int, recompiled: int, kind: str | None
) -> None:
    script = write(tmp_path, "s.py", REBUILT.format(body=body))
    result = run_script(script, iterations=2, tf_profiler=False)
    (site,) = result.sites
    assert site.report is not None
    seen = {k: v for k, v in site.report.call.facts if k.startswith("calls.")}
    assert seen == {
        "calls.later": str(site.calls - 1),
        "calls.new_model": str(new),
        "calls.recompiled": str(recompiled),
    }
    rebuilt = rebuilt_between_calls(site.report)
    assert (rebuilt.kind if rebuilt is not None else None) == kind


INPUTS = """
import numpy as np
from fake_keras import FakeModel

class Model(FakeModel):
    def predict(self, x, y=None, work=300_000):
        return super().predict(x, work)

model, same = Model(), np.ones((4, 2), "float32")
for _ in range(6):
    model.predict({args})
"""


@pytest.mark.parametrize(
    ("args", "same"),
    [
        ("same", 5),
        ("np.ones((4, 2), 'float32')", 0),
        ("[same, same][0] + 0", 0),
        # a training set passed again beside new indices: the set is converted again
        ("same, np.arange(4)", 5),
    ],
    ids=["same-array", "new-array", "new-result", "same-beside-new"],
)
def test_run_counts_the_later_calls_that_pass_an_argument_again(
    tmp_path: Path, fake_keras: None, args: str, same: int
) -> None:
    # a server's handler gets new data on every request: converting it is not a conversion
    # to move out of the loop, and the conversion finding reads this fact
    script = write(tmp_path, "s.py", INPUTS.format(args=args))
    (site,) = run_script(script, iterations=2, tf_profiler=False).sites
    assert site.report is not None
    seen = {k: v for k, v in site.report.call.facts if k.startswith("calls.")}
    assert seen == {"calls.later": "5", "calls.same_inputs": str(same)}


ONLINE_LOOP = """
import numpy as np
import keras

rng = np.random.default_rng(0)
model = keras.Sequential(
    [keras.Input((8,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)]
)
model.compile("adam", "mse")
for step in range(40):
    x = rng.standard_normal((32, 8)).astype("float32")
    y = rng.standard_normal((32, 2)).astype("float32")
    model.train_on_batch(x, y)
    q = model.predict(x[:4], verbose=0)
"""


@pytest.mark.tf
def test_a_sites_trace_holds_only_its_own_calls(tmp_path: Path) -> None:
    """An online loop alternating train_on_batch and predict on NumPy slices: the pipelines
    each predict builds ran while train_on_batch's trace was open between its calls, which
    made train_on_batch input-bound (91 %); its trace now ends at the other site's call."""
    result = run_script(write(tmp_path, "online.py", ONLINE_LOOP), iterations=3)
    sites = {s.method: s for s in result.sites}
    train = sites["train_on_batch"].report
    assert train is not None
    assert train.probes is not None and train.probes.tf_profile is not None  # it was traced
    assert "input-bound" not in [f.id for f in train.findings], train.findings
    assert sites["predict"].report.findings[0].id == "per-call-input-pipeline"


SERVER = """
import numpy as np
import keras

rng = np.random.default_rng(0)
model = keras.Sequential(
    [keras.Input((64,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(4)]
)
kept = rng.random((16, 64), dtype=np.float32)
for request in range(120):
    batch = {batch}
    model.predict_on_batch(batch)
"""


@pytest.mark.tf
@pytest.mark.parametrize("batch", ["rng.random((16, 64), dtype=np.float32)", "kept"])
def test_a_server_given_new_data_per_request_is_not_told_to_convert_once(
    tmp_path: Path, batch: str
) -> None:
    """A request handler's new arrays are converted once each: no conversion-overhead (it
    was "convert inputs once, outside the loop" at 15 % before), and the fact says why; the
    same array passed again keeps the finding's premise (every later call passes it again)."""
    result = run_script(write(tmp_path, "serve.py", SERVER.format(batch=batch)), iterations=3)
    (site,) = result.sites
    assert site.report is not None
    facts = dict(site.report.call.facts)
    same = facts["calls.later"] if batch == "kept" else "0"
    assert facts["calls.same_inputs"] == same
    if batch != "kept":
        assert "conversion-overhead" not in [f.id for f in site.report.findings]
