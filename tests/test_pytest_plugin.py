"""The pytest plugin, as a user's suite meets it: pytest run in a subprocess on small test
files, the plugin loaded with ``-p`` (the ``pytest11`` entry point does the same once tfdiag
is installed), entry-point autoloading off so an installed copy cannot load twice."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

from tfdiag.frontends.pytest_plugin import report_stem

PLUGIN = "tfdiag.frontends.pytest_plugin"


def fix_of(finding: str, key: str) -> str:
    """A fix text of the findings table (the message quotes it whole)."""
    from tfdiag.advise import FINDINGS

    return next(s.fixes[key] for s in FINDINGS if s.id == finding)


def run_pytest(
    tmp_path: Path, source: str, *args: str, ini: str = "", timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_user.py").write_text(textwrap.dedent(source))
    (tmp_path / "pytest.ini").write_text("[pytest]\n" + textwrap.dedent(ini))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "COLUMNS": "200",
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", PLUGIN, "-p", "no:cacheprovider", "-q", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_entry_point_is_declared_and_resolves_to_the_plugin() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    import importlib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["pytest11"]["tfdiag"]
    assert target == PLUGIN
    module = importlib.import_module(target)
    assert callable(module.pytest_addoption) and callable(module.tfdiag_check)


def test_report_stems_are_file_names_one_per_test() -> None:
    assert report_stem("tests/test_x.py::test_y[a-1]").startswith("tests_test_x.py__test_y_a-1-")
    assert report_stem("t.py::T::test[../../etc]").startswith("t.py__T__test_.._.._etc-")
    assert report_stem("t.py::t") == report_stem("t.py::t")  # the same name in every run
    long = report_stem("t.py::test[" + "x" * 300 + "]")
    assert len(long) <= 140 and long != report_stem("t.py::test[" + "x" * 301 + "]")


def test_report_stems_are_injective_over_ids_and_checks() -> None:
    """#32: ids that read alike once sanitised, and a second check of ``[x]`` beside
    ``[x-2]``, shared one file (seven checks left four reports)."""
    ids = [
        "t.py::test[batch 32]",
        "t.py::test[batch_32]",
        "t.py::test[batch/32]",
        "t.py::test[caf\u00e9]",
        "t.py::test[caf\u00e8]",
        "t.py::test[x]",
        "t.py::test[x-2]",
        "t.py::test[X]",
        "t.py::a::b",
        "t.py::a__b",
    ]
    stems = [report_stem(i, check) for i in ids for check in (1, 2, 3)]
    assert len({s.lower() for s in stems}) == len(stems)  # case-insensitive file systems too
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", s) for s in stems)


def test_seven_checks_leave_seven_reports(tmp_path: Path) -> None:
    source = """
        import pytest

        @pytest.mark.parametrize("n", ["batch 32", "batch_32", "caf\u00e9", "x", "x-2"])
        def test_p(tfdiag_check, n):
            tfdiag_check(lambda: sum(range(50)), iterations=2, forbid=[])
            if n == "x":
                tfdiag_check(lambda: sum(range(50)), iterations=2, forbid=[])

        def test_q(tfdiag_check):
            tfdiag_check(lambda: sum(range(50)), iterations=2, forbid=[])
    """
    proc = run_pytest(tmp_path, source, "--tfdiag-dir", "out")
    assert "6 passed" in proc.stdout, proc.stdout + proc.stderr
    assert len(list((tmp_path / "out").glob("*.tfdiag.json"))) == 7


def test_a_passing_check_returns_the_report_and_saves_it_per_test(tmp_path: Path) -> None:
    """Plain Python, no TensorFlow: the settings come from the call, the marker, the ini."""
    source = """
        import sys
        import pytest

        def work():
            return sum(range(200))

        def test_call(tfdiag_check):
            report = tfdiag_check(work, iterations=4)
            assert len(report.timing.iteration_s) == 4
            again = tfdiag_check(work, iterations=3, forbid=[])
            assert len(again.timing.iteration_s) == 3
            assert "tensorflow" not in sys.modules

        @pytest.mark.tfdiag(iterations=5)
        def test_marker(tfdiag_check):
            assert len(tfdiag_check(work).timing.iteration_s) == 5

        def test_ini(tfdiag_check):
            assert len(tfdiag_check(work).timing.iteration_s) == 6

        @pytest.mark.tfdiag(iteratons=5)
        def test_marker_typo(tfdiag_check):
            tfdiag_check(work)

        def test_unknown_id(tfdiag_check):
            tfdiag_check(work, forbid=["per-iteration-tracin"])

        @pytest.mark.tfdiag(iterations=0)
        def test_no_iterations(tfdiag_check):
            tfdiag_check(work)
    """
    proc = run_pytest(tmp_path, source, "--tfdiag-dir", "out", ini="tfdiag_iterations = 6\n")
    out = proc.stdout
    assert "3 passed" in out and "3 failed" in out, out + proc.stderr
    assert "unknown setting(s) iteratons" in out
    assert "tfdiag_check: forbid: 'per-iteration-tracin' is not a finding id" in out
    assert "tfdiag_check: iterations must be at least 1, got 0" in out
    assert "guard.py" not in out  # a settings mistake is one line, not tfdiag's traceback
    saved = sorted(p.name for p in (tmp_path / "out").glob("*.tfdiag.json"))
    assert saved == sorted(
        report_stem(f"test_user.py::{test}", check) + ".tfdiag.json"
        for test, check in [("test_call", 1), ("test_call", 2), ("test_ini", 1), ("test_marker", 1)]
    )
    assert (tmp_path / "out" / f"{report_stem('test_user.py::test_call')}.prof").exists()


def test_ini_options_set_the_suite_defaults_markers_override_and_tmp_path_holds_reports(
    tmp_path: Path,
) -> None:
    source = """
        import pytest

        def test_ini(tfdiag_check):
            assert tfdiag_check.settings() == {
                "forbid": ["per-iteration-tracing", "eager-execution"],
                "iterations": 7,
                "severity": "high",
                "tf_profiler": True,
            }

        @pytest.mark.tfdiag(severity="low", iterations=3)
        class TestMarked:
            @pytest.mark.tfdiag(forbid=[], iterations=2)
            def test_marker(self, tfdiag_check):
                assert tfdiag_check.settings() == {
                    "forbid": [], "iterations": 2, "severity": "low", "tf_profiler": True
                }

        @pytest.mark.tfdiag(tf_profiler=False, iterations=3)
        def test_default_dir(tfdiag_check, tmp_path):
            tfdiag_check(lambda: sum(range(10)))
            assert list(tmp_path.glob("test_user.py__test_default_dir-*.tfdiag.json"))
    """
    ini = """
        tfdiag_forbid = per-iteration-tracing eager-execution
        tfdiag_iterations = 7
        tfdiag_severity = high
        tfdiag_tf_profiler = true
    """
    proc = run_pytest(tmp_path, source, ini=ini)
    assert "3 passed" in proc.stdout, proc.stdout + proc.stderr


def test_the_options_are_in_pytest_help(tmp_path: Path) -> None:
    proc = run_pytest(tmp_path, "", "--help")
    assert proc.returncode == 0, proc.stderr
    for text in ("--tfdiag-dir", "tfdiag_forbid", "tfdiag_iterations", "tfdiag_severity"):
        assert text in proc.stdout, text


@pytest.mark.tf
def test_the_ci_doc_suite_passes_and_its_predict_variant_fails(tmp_path: Path) -> None:
    """docs/ci.md's worked example, run as written; with ``model.predict`` in its predict
    test (the failure the doc shows), that test fails on ``per-call-input-pipeline``."""
    import re

    doc = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    (suite,) = [b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "test_speed" in b]
    proc = run_pytest(tmp_path, suite, "--tfdiag-dir", "tfdiag-reports")
    assert "3 passed" in proc.stdout, proc.stdout + proc.stderr
    stem = report_stem("test_user.py::test_train_step")
    assert (tmp_path / "tfdiag-reports" / f"{stem}.tfdiag.json").exists()
    slow = suite.replace(
        "tfdiag_check(model.predict_on_batch, x)", "tfdiag_check(model.predict, x, verbose=0)"
    )
    assert slow != suite
    proc = run_pytest(tmp_path, slow)
    assert "1 failed, 2 passed" in proc.stdout, proc.stdout + proc.stderr
    assert "[high] per-call-input-pipeline: A data adapter" in proc.stdout
    assert f"fix: {fix_of('per-call-input-pipeline', 'predict')}" in proc.stdout


TF_SUITE = """
    import itertools
    import tensorflow as tf

    @tf.function
    def step(i):
        return i * 2

    def test_python_int(tfdiag_check):
        counter = itertools.count()
        tfdiag_check(lambda: step(next(counter)), forbid=["per-iteration-tracing"])

    def test_python_int_default_forbid(tfdiag_check):
        counter = itertools.count(100)
        tfdiag_check(lambda: step(next(counter)))

    def test_tensor(tfdiag_check):
        counter = itertools.count()
        report = tfdiag_check(
            lambda: step(tf.constant(next(counter))), forbid=["per-iteration-tracing"]
        )
        assert "per-iteration-tracing" not in [f.id for f in report.findings]
"""


@pytest.mark.tf
def test_a_changing_python_int_fails_the_test_and_a_tensor_passes(tmp_path: Path) -> None:
    proc = run_pytest(tmp_path, TF_SUITE, "--tfdiag-dir", str(tmp_path / "reports"))
    out = proc.stdout
    assert proc.returncode == 1 and "2 failed, 1 passed" in out, out + proc.stderr
    assert "FAILED test_user.py::test_python_int - tfdiag" in out
    assert "FAILED test_user.py::test_python_int_default_forbid" in out
    message = out[out.index("ForbiddenFinding: tfdiag_check: 1 forbidden finding(s)") :]
    assert "[high] per-iteration-tracing: Graphs are traced on every iteration" in message
    assert "argument `i` is a Python value that changes" in message
    assert "fix: Pass the `i` argument as a tensor at test_user.py:" in message  # its line
    report = tmp_path / "reports" / f"{report_stem('test_user.py::test_python_int')}.tfdiag.json"
    assert f"report: {report}" in message and report.exists()
    assert (
        tmp_path / "reports" / f"{report_stem('test_user.py::test_tensor')}.tfdiag.json"
    ).exists()
    assert "guard.py" not in message  # the failure points at the test, not tfdiag's frames


def test_tf_profiler_words_mean_what_they_say(tmp_path: Path) -> None:
    """#32: ``tf_profiler="false"`` in a marker or ``"off"`` as the argument turned the TF
    profiler on (``bool("false")``), which imports TensorFlow."""
    source = """
        import sys
        import pytest

        @pytest.mark.tfdiag(tf_profiler="false")
        def test_marker_word(tfdiag_check):
            tfdiag_check(lambda: sum(range(50)), iterations=2, forbid=[])
            assert "tensorflow" not in sys.modules

        def test_argument_word(tfdiag_check):
            tfdiag_check(lambda: sum(range(50)), iterations=2, forbid=[], tf_profiler="off")
            assert "tensorflow" not in sys.modules

        @pytest.mark.tfdiag(tf_profiler="sometimes")
        def test_not_a_word(tfdiag_check):
            tfdiag_check(lambda: sum(range(50)), iterations=2, forbid=[])
    """
    proc = run_pytest(tmp_path, source)
    out = proc.stdout
    assert "2 passed" in out and "1 failed" in out, out + proc.stderr
    assert "tfdiag_check: tf_profiler: expected True or False, got 'sometimes'" in out


def test_a_tfdiag_dir_that_cannot_be_a_folder_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder\n")
    source = """
        def test_a(tfdiag_check):
            tfdiag_check(lambda: sum(range(50)), iterations=2, forbid=[])
    """
    proc = run_pytest(tmp_path, source, "--tfdiag-dir", "taken/reports")
    out = proc.stdout
    assert "1 failed" in out, out + proc.stderr
    assert "tfdiag_check: --tfdiag-dir 'taken/reports' cannot be a folder (Not a directory)" in out
    assert "OSError" not in out and "Traceback" not in out and "NotADirectoryError" not in out
