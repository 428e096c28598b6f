"""`tfdiag fix --report`: the one command that runs what a report names. A report is data
that may come from anyone (docs/security.md), so the script it names must be under the folder
the command is typed in, and the command is said before it runs."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

#: A `tfdiag run --out` report of `print(sum(range(10)))` (its script `s.py`, no arguments).
SAVED = Path(__file__).with_name("data") / "fix" / "script_report.json"


def _report(folder: Path, script: str, argv: list[str]) -> Path:
    doc = json.loads(SAVED.read_text())
    doc.update(script=script, argv=argv)
    path = folder / "r.tfdiag.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_report_naming_a_script_outside_the_folder_runs_nothing(tmp_path: Path) -> None:
    elsewhere, here = tmp_path / "elsewhere", tmp_path / "here"
    elsewhere.mkdir(), here.mkdir()
    marker = tmp_path / "ran"
    (elsewhere / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    for script in (str(elsewhere / "evil.py"), "../elsewhere/evil.py"):
        report = _report(here, script, ["--anything"])
        proc = run_cli("fix", "--report", str(report), cwd=here)
        assert proc.returncode == 2, proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert "outside this folder" in line
        assert not marker.exists()


def test_a_report_of_a_script_here_says_the_command_it_runs(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("print(sum(range(10)))\n")
    report = _report(tmp_path, "s.py", ["--n", "3 4"])
    proc = run_cli("fix", "--report", str(report), cwd=tmp_path)
    assert "tfdiag: the report's command: python s.py --n '3 4'" in proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert "nothing to fix" in proc.stdout + proc.stderr
