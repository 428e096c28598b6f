"""The CLI through a subprocess, as a user runs it: exit codes, one-line errors, formats."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli
from synth import keras3_predict_report


@pytest.fixture()
def saved(tmp_path: Path) -> Path:
    return keras3_predict_report().save(tmp_path / "my run.tfdiag.json")[0]


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_explain_text(saved: Path) -> None:
    proc = run_cli("explain", str(saved), "--width", "120")
    assert proc.returncode == 0, proc.stderr
    assert "per-call-input-pipeline" in proc.stdout
    assert "Where the time goes" in proc.stdout


def test_explain_json(saved: Path) -> None:
    proc = run_cli("explain", str(saved), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["findings"][0]["id"] == "per-call-input-pipeline"
    assert {"id", "title", "evidence", "fix"} <= set(doc["findings"][0])


def test_explain_with_user_rules(saved: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            [
                {
                    "path": "keras/src/trainers/data_adapters/*",
                    "function": "*",
                    "category": "callbacks",
                    "why": "test",
                }
            ]
        )
    )
    doc = json.loads(
        run_cli("explain", str(saved), "--rules", str(rules), "--format", "json").stdout
    )
    cats = {c["category"]: c for c in doc["categories"]}
    assert "callbacks" in cats and "input-pipeline" not in cats


def test_a_rule_that_matches_no_function_says_which_glob_matched_nothing(
    saved: Path, tmp_path: Path
) -> None:
    """Issue 35: a rules file whose path glob matched no function was silent."""
    rule = {"function": "*", "category": "callbacks", "why": "test"}
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            [
                {**rule, "path": "keras/src/trainers/data_adapters/*"},
                {**rule, "path": "mylib/nothere*.py"},
                {**rule, "path": "keras/src/trainers/*", "function": "no_such_function"},
            ]
        )
    )
    proc = run_cli("explain", str(saved), "--rules", str(rules), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["categories"]  # the report, as before, on stdout
    assert proc.stderr.splitlines() == [
        f"tfdiag: warning: {rules}: rule 2: its path 'mylib/nothere*.py' matches no "
        "function's module",
        f"tfdiag: warning: {rules}: rule 3: its function 'no_such_function' matches no "
        "function under path 'keras/src/trainers/*'",
    ]


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda d: d / "missing.tfdiag.json", "no such file"),
        (
            lambda d: (d / "bad.tfdiag.json").write_text("{ not json") and d / "bad.tfdiag.json",
            "corrupt JSON",
        ),
        (
            lambda d: (d / "x.prof").write_bytes(b"\x00junk") and d / "x.prof",
            "neither a tfdiag report nor pstats",
        ),
        (lambda d: d, "is a folder"),
        (lambda d: (d / "e.tfdiag.json").write_bytes(b"") or d / "e.tfdiag.json", "empty file"),
        (
            lambda d: (
                (d / "t.tfdiag.json").write_text('{"schema_version": 1, "timing": {')
                and d / "t.tfdiag.json"
            ),
            "corrupt JSON",
        ),
    ],
)
def test_bad_paths_exit_2_with_one_line(tmp_path: Path, make, fragment: str) -> None:
    line = _one_line_error(run_cli("explain", str(make(tmp_path))))
    assert line.startswith("tfdiag: error:") and fragment in line


def test_bad_arguments_exit_2_with_one_line(saved: Path) -> None:
    assert "must be at least 1" in _one_line_error(
        run_cli("explain", str(saved), "--iterations", "0")
    )
    assert "invalid choice" in _one_line_error(run_cli("nonsense"))
    bad_rules = saved.with_name("rules.json")
    bad_rules.write_text('[{"path": "x", "function": "y", "category": "nope"}]')
    assert "unknown category" in _one_line_error(
        run_cli("explain", str(saved), "--rules", str(bad_rules))
    )


def test_catalog_lists_findings_and_rules() -> None:
    proc = run_cli("catalog")
    assert proc.returncode == 0
    assert "`per-iteration-tracing`" in proc.stdout
    assert "`*_process_inputs`" in proc.stdout
    rules = json.loads(run_cli("catalog", "--format", "json").stdout)
    assert any(r["function"] == "*_create_graph_function" for r in rules)


def test_every_subcommand_help_has_an_example() -> None:
    for command in ("explain", "snakeviz", "demo", "catalog"):
        proc = run_cli(command, "--help")
        assert proc.returncode == 0 and "example" in proc.stdout, command


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening_addresses(port: int) -> set[str]:
    """Local addresses listening on ``port``, from /proc/net/tcp{,6} (Linux)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, hexport = local.rsplit(":", 1)
            if int(hexport, 16) == port and state == "0A":  # LISTEN
                if len(addr) == 8:
                    found.add(socket.inet_ntoa(bytes.fromhex(addr)[::-1]))
                else:
                    found.add("ipv6:" + addr)
    return found


def test_snakeviz_serves_the_profile_on_localhost_only(saved: Path) -> None:
    from test_snakeviz_server import Server, get

    server = Server(saved, _free_port(), saved.parent)
    try:
        status, body = get(server.url())
        assert status == 200 and "ArrayDataAdapter.get_tf_dataset" in body
        assert _listening_addresses(server.port) == {"127.0.0.1"}
    finally:
        server.stop()
    assert "bound to 127.0.0.1 only" in "".join(server.seen)


def test_explain_of_a_pyinstrument_session_names_what_it_is(tmp_path: Path) -> None:
    # #12: explain on the .pyisession tfdiag itself writes said "bad marshal data".
    from synth import full_set_report

    full_set_report().save(tmp_path / "run")
    proc = run_cli("explain", str(tmp_path / "run.pyisession"))
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line and "marshal" not in line
    assert "pyinstrument --load run.pyisession" in line and "run.tfdiag.json" in line
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}')
    proc = run_cli("explain", str(tmp_path / "other.json"))
    assert proc.returncode == 2 and "no schema_version" in proc.stderr
