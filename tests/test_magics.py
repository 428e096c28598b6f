"""%load_ext tfdiag, %tfdiag and %%tfdiag through IPython's own API, on a real tiny model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from tfdiag.frontends.magics import call_parts, split_options
from tfdiag.results.report import Report


def test_split_options_keeps_the_statement_untouched() -> None:
    assert split_options("-n 5 -o rep model.predict(x, verbose=-1)") == (
        ["-n", "5", "-o", "rep"],
        "model.predict(x, verbose=-1)",
    )
    assert split_options("--iterations=3 --force f(a -n)") == (
        ["--iterations=3", "--force"],
        "f(a -n)",
    )
    assert split_options("  -q  ") == (["-q"], "")


def test_call_parts_evaluates_callable_and_arguments_once() -> None:
    seen: list[int] = []

    def make(v: int) -> int:
        seen.append(v)
        return v

    ns = {"f": lambda *a, **k: (a, k), "make": make, "xs": [1, 2], "kw": {"b": 3}}
    fn, args, kwargs = call_parts("f(make(0), *xs, a=make(9), **kw)", ns)  # type: ignore[misc]
    assert fn is ns["f"] and args == (0, 1, 2) and kwargs == {"a": 9, "b": 3}
    assert seen == [0, 9]
    assert call_parts("y = f(1)", ns) is None
    assert call_parts("f(1) + 1", ns) is None


@pytest.fixture(scope="module")
def ip(tiny_model_factory: Callable[[str], Any]) -> Iterator[InteractiveShell]:
    import numpy as np

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "tfdiag")
    shell.user_ns["model"] = tiny_model_factory("keras3")
    shell.user_ns["x"] = np.random.default_rng(0).standard_normal((32, 4)).astype("float32")
    yield shell
    for name in ("model", "x", "rep", "cell_rep", "y"):
        shell.user_ns.pop(name, None)


@pytest.mark.tf
def test_line_magic_profiles_the_call(ip: InteractiveShell, capsys: Any) -> None:
    ip.run_line_magic("tfdiag", "-n 3 -o rep model.predict(x, verbose=0)")
    report = ip.user_ns["rep"]
    assert isinstance(report, Report)
    assert report.call.label == "Functional.predict" and report.call.method == "predict"
    assert report.timing.iterations == 3
    assert report.call.args == ("ndarray float32 (32, 4)",)
    out = capsys.readouterr().out
    assert "tfdiag · Functional.predict" in out and "Findings" in out
    assert "per-call-input-pipeline" in [f.id for f in report.findings]
    assert "Culprits" not in out and "The whole report: report.show()" in out  # the short view
    ip.run_line_magic("tfdiag", "-n 3 --full model.predict(x, verbose=0)")
    assert "Culprits" in capsys.readouterr().out


@pytest.mark.tf
def test_cell_magic_profiles_the_cell_and_names_the_keras_method(
    ip: InteractiveShell, capsys: Any
) -> None:
    ip.run_cell_magic(
        "tfdiag",
        "-n 3 -o cell_rep -q",
        "y = model.predict(x, verbose=0)\ny = model.predict(x, verbose=0)\n",
    )
    report = ip.user_ns["cell_rep"]
    assert report.call.method == "predict" and report.call.label.startswith("cell → ")
    predicts = [f for f in report.profile.functions if f.name == "TensorFlowTrainer.predict"]
    assert [f.calls for f in predicts] == [2 * (3 + 1)]  # 2 per run, cold run + 3
    assert ip.user_ns["y"].shape == (32, 1)  # the cell ran in the notebook's namespace
    assert capsys.readouterr().out == ""  # -q


@pytest.mark.tf
def test_line_magic_on_a_statement_runs_it_whole(ip: InteractiveShell) -> None:
    ip.run_line_magic("tfdiag", "-n 3 -q -o rep y = model.predict(x, verbose=0)")
    assert ip.user_ns["rep"].call.label.startswith("y = model.predict(x, verbose=0) → ")


@pytest.mark.tf
def test_save_and_one_line_errors(ip: InteractiveShell, tmp_path: Path) -> None:
    target = tmp_path / "nb"
    ip.run_line_magic("tfdiag", f"-n 3 -q --save {target} model.predict_on_batch(x)")
    assert (tmp_path / "nb.tfdiag.json").exists() and (tmp_path / "nb.prof").exists()
    with pytest.raises(UsageError, match=r"^tfdiag: .*nb.tfdiag.json exists"):
        ip.run_line_magic("tfdiag", f"-n 3 -q --save {target} model.predict_on_batch(x)")
    with pytest.raises(UsageError, match="iterations must be at least 1"):
        ip.run_line_magic("tfdiag", "-n 0 model.predict_on_batch(x)")
    with pytest.raises(UsageError, match="nothing to profile"):
        ip.run_line_magic("tfdiag", "-n 3")
    with pytest.raises(UsageError, match="unrecognized arguments: --bogus"):
        ip.run_line_magic("tfdiag", "--bogus model(x)")
    with pytest.raises(UsageError, match="-o needs a variable name"):
        ip.run_line_magic("tfdiag", "-o 1x model(x)")


@pytest.mark.tf
def test_report_renders_as_html_in_a_notebook(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    import IPython.display
    import rich.console

    shown: list[Any] = []
    monkeypatch.setattr(rich.console, "_is_jupyter", lambda: True)
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj))
    ip.run_line_magic("tfdiag", "-n 3 model.predict_on_batch(x)")
    bundle = shown[-1]._repr_mimebundle_(include=[], exclude=[])
    assert bundle["text/html"].startswith("<pre")
    assert "Functional.predict_on_batch" in bundle["text/html"]
    assert "Findings" in bundle["text/plain"] or "No findings" in bundle["text/plain"]


@pytest.mark.tf
def test_line_magic_verify_measures_the_fix(ip: InteractiveShell) -> None:
    ip.run_line_magic("tfdiag", "-n 3 -q --verify --verify-s 30 -o rep model.predict(x, verbose=0)")
    report = ip.user_ns["rep"]
    first = report.findings[0]
    assert first.id == "per-call-input-pipeline" and first.verification is not None
    assert first.verification.status == "verified", first.verification.reason
    with pytest.raises(UsageError, match="--verify needs a single call"):
        ip.run_line_magic("tfdiag", "--verify y = model.predict(x, verbose=0)")
    with pytest.raises(UsageError, match="--verify works on a line magic"):
        ip.run_cell_magic("tfdiag", "--verify", "model.predict(x, verbose=0)")


def test_a_keras_call_without_verbose_is_profiled_quietly() -> None:
    # #12: `%tfdiag model.predict(X)`, as the docs write it, printed a progress bar per call.
    from tfdiag.frontends.magics import quiet_keras

    class Model:
        def compile(self) -> None: ...
        def predict(self, x: object, verbose: object = "auto") -> None: ...
        def predict_on_batch(self, x: object) -> None: ...

    class NotKeras:
        def predict(self, x: object) -> None: ...

    m = Model()
    assert quiet_keras(m.predict, {}) == {"verbose": 0}
    assert quiet_keras(m.predict, {"verbose": 2}) == {"verbose": 2}  # the user's choice stays
    assert quiet_keras(m.predict_on_batch, {}) == {}  # prints nothing: left alone
    assert quiet_keras(NotKeras().predict, {}) == {}
