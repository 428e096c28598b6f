"""Reading what a user names: regular files only, sizes checked first, every JSON field's
type and range checked before use (docs/hardening.md, "Files")."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from synth import full_set_report, keras3_predict_report

import tfdiag

#: The largest report JSON read (tfdiag.records.reading.MAX_JSON_BYTES).
MAX_JSON_BYTES = 128 * 2**20


def _one_line_exit_2(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _zero(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


def _npy(path: Path) -> Path:
    import numpy as np

    np.save(path, np.zeros((4, 4), dtype="float32"))
    return path


# -- only regular files ----------------------------------------------------------------


@pytest.mark.parametrize("special", [_fifo, _zero])
@pytest.mark.parametrize(
    "case", ["report", "prof", "snakeviz", "tensorboard", "rules", "findings", "model", "x"]
)
def test_a_fifo_or_a_device_is_refused_not_read(tmp_path: Path, special: Any, case: str) -> None:
    saved = keras3_predict_report().save(tmp_path / "saved")[0]
    name = {"report": "r.tfdiag.json", "prof": "r.prof", "snakeviz": "r.tfdiag.json"}.get(
        case, {"tensorboard": "r.tfdiag.json", "model": "m.keras", "x": "x.npy"}.get(case, "r.json")
    )
    odd = special(tmp_path / name)
    args = {
        "report": ["explain", str(odd)],
        "prof": ["explain", str(odd), "--iterations", "3"],
        "snakeviz": ["snakeviz", str(odd), "--no-browser"],
        "tensorboard": ["tensorboard", str(odd)],
        "rules": ["explain", str(saved), "--rules", str(odd)],
        "findings": ["explain", str(saved), "--findings", str(odd)],
        "model": ["compare", "--model", str(odd), "--x", str(_npy(tmp_path / "ok.npy"))],
        "x": ["compare", "--model", str(tmp_path / "m.keras"), "--x", str(odd)],
    }[case]
    started = time.monotonic()
    line = _one_line_exit_2(run_cli(*args, timeout=60))
    assert ("a FIFO" if special is _fifo else "a device") in line and str(odd) in line
    assert time.monotonic() - started < 30


def test_a_fifo_in_the_trace_folder_is_refused_before_tensorboard_starts(tmp_path: Path) -> None:
    json_path = full_set_report().save(tmp_path / "run")[0]
    trace = tmp_path / "run.tfprofile/plugins/profile/run/host.xplane.pb"
    trace.unlink()
    _fifo(trace)
    line = _one_line_exit_2(run_cli("tensorboard", str(json_path), timeout=60))
    assert "not a regular file" in line and "host.xplane.pb" in line


def test_a_trace_folder_not_saved_with_the_report_is_refused(tmp_path: Path) -> None:
    json_path = full_set_report(first_call_s=0.1).save(tmp_path / "run")[0]
    trace = tmp_path / "run.tfprofile/plugins/profile/run/host.xplane.pb"
    trace.write_bytes(b"another run's trace")
    line = _one_line_exit_2(run_cli("tensorboard", str(json_path), timeout=60))
    assert "not the trace saved with run.tfdiag.json" in line


def test_a_folder_as_a_rules_file(tmp_path: Path) -> None:
    saved = keras3_predict_report().save(tmp_path / "saved")[0]
    (tmp_path / "rules").mkdir()
    line = _one_line_exit_2(run_cli("explain", str(saved), "--rules", str(tmp_path / "rules")))
    assert "is a folder" in line


def test_an_oversized_report_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.tfdiag.json"
    with open(path, "wb") as fh:  # sparse: no disk used
        fh.write(b"{")
        fh.truncate(MAX_JSON_BYTES + 1)
    started = time.monotonic()
    with pytest.raises(tfdiag.InputError, match="larger than 128 MiB"):
        tfdiag.load_result(path)
    assert time.monotonic() - started < 1


# -- every field's type and range ----------------------------------------------------


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(full_set_report().to_json()))
    return doc


def _set(doc: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node: Any = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("notes", "x" * 5_000_000, "notes must be a list"),
        ("call.args", "y" * 1_000_000, "call.args must be a list"),
        ("call.kwargs", ["a", "b"], "call.kwargs must be a JSON object"),
        ("partial", "false", "partial must be true or false"),
        ("partial", 0, "partial must be true or false"),
        ("timing.iteration_s", [1e308], "out of range"),
        ("timing.iterations", 3.0, "iterations must be a whole number"),
        ("timing.traced", True, "traced must be a whole number"),
        ("environment.cpu_count", "2", "cpu_count must be a whole number"),
        ("environment.devices", "GPU:0", "devices must be a list"),
        ("profile.functions.0.3", 1e20, "call count"),
        ("profile.functions.0.5", 10**400, "a time must be a number"),
        ("profile.functions.0.7", "callers", "wrong shape"),
        ("probes.tf_profile", {"steps": 0, "host_op_s": 0.1}, "steps out of range"),
        ("probes.sampling.interval_s", 0, "interval_s out of range"),
        ("probes.sampling.stacks", [[[0], 1, "1"]], "must be a number"),
        ("traces", [[0, "f", "f.py", 1, "f", "params"]], "must be a list"),
        ("rules", [{"path": "*", "function": "*", "category": ["x"]}], "'category' must be"),
    ],
)
def test_a_field_of_the_wrong_type_is_one_line_at_once(
    tmp_path: Path, field: str, value: Any, fragment: str
) -> None:
    doc = _doc()
    if field.startswith("probes.tf_profile"):
        doc["probes"]["tf_profile"] = value
    else:
        _set(doc, field, value)
    path = tmp_path / "odd.tfdiag.json"
    path.write_text(json.dumps(doc))
    started = time.monotonic()
    with pytest.raises(tfdiag.InputError, match=fragment) as info:
        tfdiag.load_result(path)
    assert "\n" not in str(info.value)
    assert time.monotonic() - started < 2  # not minutes of work on a string


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        ('"first_call_s":0.2', '"first_call_s":NaN', "NaN is not a JSON number"),
        ('"first_call_s":0.2', '"first_call_s":-Infinity', "Infinity is not a JSON number"),
        ('"first_call_s":0.2', '"first_call_s":1e999', "does not fit a float"),
        ('"iteration_s":[0.05', '"iteration_s":[NaN', "NaN"),
        ('"label":"Model.predict"', '"label":"\\udc80"', "lone surrogate"),
        ('"iterations":10', '"iterations":1' + "0" * 5000, "corrupt JSON"),
    ],
)
def test_numbers_and_text_json_cannot_carry_exit_2(
    tmp_path: Path, old: str, new: str, fragment: str
) -> None:
    text = json.dumps(full_set_report().to_json(), separators=(",", ":"))
    assert old in text
    path = tmp_path / "odd.tfdiag.json"
    path.write_text(text.replace(old, new, 1))
    for fmt in ("text", "json"):
        line = _one_line_exit_2(run_cli("explain", str(path), "--format", fmt))
        assert fragment in line


@pytest.mark.parametrize(
    "entry",
    [
        (float("inf"), 1, 0.1, 0.1, {}),
        (1, 1, float("nan"), 0.1, {}),
        (1, 10**30, 0.1, 0.1, {}),
        (1, 1, 0.1, 1e300, {}),
        (1, 1, 0.1, 0.1, {("g.py", 2, "g"): (1, 1, float("inf"), 0.1)}),
    ],
)
def test_prof_counts_and_times_out_of_range_exit_2(tmp_path: Path, entry: tuple[Any, ...]) -> None:
    path = tmp_path / "odd.prof"
    path.write_bytes(marshal.dumps({("f.py", 1, "f"): entry, ("g.py", 2, "g"): (1, 1, 0, 0, {})}))
    line = _one_line_exit_2(run_cli("explain", str(path), "--iterations", "1"))
    assert "pstats" in line


def test_an_npy_header_that_claims_terabytes_exits_2(tmp_path: Path) -> None:
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (8589934592, 1024), }"
    header += " " * (117 - len(header)) + "\n"
    path = tmp_path / "huge.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    line = _one_line_exit_2(
        run_cli("compare", "--model", str(tmp_path / "m.keras"), "--x", str(path))
    )
    assert "header claims 35,184,372,088,832 bytes" in line


@pytest.mark.parametrize(
    "args, says",
    [
        (("explain", "."), "is a folder"),
        (("explain", "/"), "is a folder"),
        (("explain", ".."), "is a folder"),
        (("merge", "/"), "is a folder"),
        (("snakeviz", "."), "is a folder"),
        (("snakeviz", ""), "an empty path"),
        (("tensorboard", "/"), "expected a .tfdiag.json report"),
    ],
)
def test_a_path_with_no_file_name_is_one_line(args: tuple[str, ...], says: str) -> None:
    """#20.10: a lock name was built from the path before the "is a folder" check, and
    ``.`` and ``/`` have no file name: an internal error, exit 1."""
    from conftest import run_cli_without_tensorflow

    line = _one_line_exit_2(run_cli_without_tensorflow(*args))
    assert line.startswith("tfdiag: error:") and says in line, line
