"""The CLI surface: help examples, exit codes, the console script, explain --plot, docs/cli.md."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from synth import SITE, Node, make_report

from tfdiag.frontends.cli import build_parser, main
from tfdiag.frontends.commands import COMMANDS


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_subcommand_help_has_an_example() -> None:
    subs = subparsers()
    assert set(subs) == {c.__name__.rsplit(".", 1)[-1] for c in COMMANDS}
    for name, sub in subs.items():
        text = sub.format_help()
        assert "example" in text and f"python -m tfdiag {name}" in text, name


def test_top_level_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "exit codes: 0 ok, 1 internal error (run: the script failed), 2 bad input, 130 " in out


def test_bad_input_is_exit_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "/nonexistent/x.tfdiag.json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tfdiag: error: ")
    assert main(["run", "--iterations", "-1", "x.py"]) == 2


def test_console_script_is_declared_and_installed() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.scripts]\ntfdiag = "tfdiag.frontends.cli:main"' in text
    script = Path(sys.executable).parent / "tfdiag"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [str(script), "run", "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0 and "python -m tfdiag run train.py" in proc.stdout


@pytest.fixture()
def saved_report(tmp_path: Path) -> Path:
    times = [0.010 + 0.0001 * (i % 3) for i in range(40)]
    times[0], times[17] = 0.2, 0.05
    root = Node(SITE + "keras/src/backend/tensorflow/trainer.py", "TensorFlowTrainer.predict", 0.2)
    json_path, _ = make_report([root], iterations=40, iteration_s=tuple(times)).save(tmp_path / "r")
    return json_path


def test_explain_plot_writes_a_png_once(saved_report: Path, tmp_path: Path) -> None:
    png = tmp_path / "timeline.png"
    first = run_cli("explain", str(saved_report), "--plot", str(png))
    assert first.returncode == 0, first.stderr
    assert png.read_bytes()[:4] == b"\x89PNG" and f"saved {png}" in first.stderr
    assert "warmup" in first.stdout and "spikes" in first.stdout
    again = run_cli("explain", str(saved_report), "--plot", str(png))
    assert again.returncode == 2 and "exists" in again.stderr
    assert run_cli("explain", str(saved_report), "--plot", str(png), "--force").returncode == 0


def test_docs_cli_reference_covers_every_subcommand_and_option() -> None:
    doc = (ROOT / "docs" / "cli.md").read_text()
    for name, sub in subparsers().items():
        assert f"## `tfdiag {name}`" in doc, name
        for action in sub._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in doc, f"{name} {flag}"
    for code in ("| 0 |", "| 1 |", "| 2 |"):
        assert code in doc


def test_importing_the_workflow_modules_imports_no_tensorflow() -> None:
    code = (
        "import sys, tfdiag, tfdiag.keras, tfdiag.analysis.timeline, tfdiag.script.instrument, "
        "tfdiag.render.plot, tfdiag.render.script_console, tfdiag.frontends.commands.run\n"
        "heavy = {'tensorflow', 'keras', 'tf_keras', 'IPython', 'matplotlib'} & set(sys.modules)\n"
        "assert callable(tfdiag.load_ipython_extension) and tfdiag.keras.ProfileCallback\n"
        "print(sorted(heavy))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
