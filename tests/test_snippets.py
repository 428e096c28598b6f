"""The README's and the docs' Python snippets (#18): the complete ones run as written, and no
snippet's Keras call prints a progress bar above the report (``verbose=0``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
#: A Keras call that prints a progress bar unless told not to: fit/predict/evaluate, called
#: or handed to tfdiag.profile.
_KERAS_CALL = re.compile(
    r"(?:model\.(?:fit|predict|evaluate)\(|profile\(model\.(?:fit|predict|evaluate)\b)"
)


def blocks(path: Path) -> list[str]:
    return _BLOCK.findall(path.read_text(encoding="utf-8"))


def _calls(code: str) -> list[str]:
    """Each Keras call's source up to its closing parenthesis (one level of nesting); a
    comment is not code."""
    code = re.sub(r"#[^\n]*", "", code)
    out = []
    for m in _KERAS_CALL.finditer(code):
        depth, end = 0, m.start()
        for end in range(m.start(), len(code)):
            if code[end] == "(":
                depth += 1
            elif code[end] == ")":
                depth -= 1
                if depth == 0:
                    break
        out.append(code[m.start() : end + 1])
    return out


def test_every_keras_call_in_a_snippet_passes_verbose() -> None:
    missing = [
        (path.name, call)
        for path in DOCS
        for code in blocks(path)
        for call in _calls(code)
        if "verbose=" not in call
    ]
    assert not missing, missing


def test_the_checker_sees_a_call_without_verbose() -> None:
    code = "# model.predict(x) in a comment\nr = tfdiag.profile(model.predict, X)\n"
    assert _calls(code + "model.fit(x, y, epochs=2)") == [
        "profile(model.predict, X)",
        "model.fit(x, y, epochs=2)",
    ]


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100", "TFDIAG_PROGRESS": "0"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.tf
@pytest.mark.parametrize(
    ("doc", "picked"),
    [("README.md", slice(0, 1)), ("docs/quickstart.md", slice(0, 4))],
    ids=["readme", "quickstart"],
)
def test_a_complete_snippet_runs_as_written(doc: str, picked: slice, tmp_path: Path) -> None:
    code = "\n".join(blocks(ROOT / doc)[picked])
    proc = _run(code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "━━" not in out and "/step" not in out, out[:2000]  # no Keras progress bar
    assert "Findings" in proc.stdout
    assert (tmp_path / "predict.tfdiag.json").is_file()
