"""Saving and loading reports: JSON round trip, pstats for snakeviz, atomic, no overwrite."""

from __future__ import annotations

import json
import pstats
from pathlib import Path

import pytest
from synth import keras3_predict_report

from tfdiag import InputError, load_report
from tfdiag.records.report import SCHEMA_VERSION, report_paths
from tfdiag.results.report import Report


def _report() -> Report:
    return keras3_predict_report()


def test_json_round_trip_keeps_raw_records_and_findings(tmp_path: Path) -> None:
    report = _report()
    json_path, prof_path = report.save(tmp_path / "run.tfdiag.json")
    loaded = load_report(json_path)
    assert loaded.profile == report.profile
    assert loaded.cold_profile == report.cold_profile
    assert loaded.timing == report.timing
    assert loaded.call == report.call
    assert [f.id for f in loaded.findings] == [f.id for f in report.findings]
    assert loaded.to_json() == report.to_json()


def test_json_top_level_has_findings_with_id_title_evidence_fix(tmp_path: Path) -> None:
    doc = _report().to_json()
    assert doc["schema_version"] == SCHEMA_VERSION and doc["kind"] == "profile"
    assert doc["findings"], "the synthetic run has a per-call input pipeline"
    for f in doc["findings"]:
        assert {"id", "title", "evidence", "fix"} <= set(f)
    json.dumps(doc, allow_nan=False)  # strict JSON: no NaN/inf


def test_prof_is_read_by_pstats(tmp_path: Path) -> None:
    report = _report()
    _, prof_path = report.save(tmp_path / "run")
    st = pstats.Stats(str(prof_path))
    keys = {k[2]: v for k, v in st.stats.items()}  # type: ignore[attr-defined]
    cc, nc, tt, ct, callers = keys["ArrayDataAdapter.get_tf_dataset"]
    assert nc == 11 and tt == pytest.approx(0.6)
    assert len(callers) == 1
    assert st.total_tt == pytest.approx(report.profile.total_s)  # type: ignore[attr-defined]


def test_save_never_overwrites_silently(tmp_path: Path) -> None:
    report = _report()
    json_path, prof_path = report.save(tmp_path / "run.tfdiag.json")
    before = json_path.read_bytes()
    prof_path.unlink()  # even a half-present set is not overwritten
    with pytest.raises(InputError, match="exists"):
        report.save(json_path)
    assert json_path.read_bytes() == before and not prof_path.exists()
    report.save(json_path, overwrite=True)
    assert prof_path.exists()


def test_save_into_a_missing_folder_fails_cleanly(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot write"):
        _report().save(tmp_path / "no" / "such" / "run.tfdiag.json")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    import tfdiag.records.files as atomic

    calls = {"n": 0}
    real_fdopen = atomic.os.fdopen

    def failing_fdopen(fd, mode):  # the second file of the set fails half-way
        calls["n"] += 1
        if calls["n"] == 2:
            atomic.os.close(fd)
            raise OSError(28, "No space left on device")
        return real_fdopen(fd, mode)

    monkeypatch.setattr(atomic.os, "fdopen", failing_fdopen)
    with pytest.raises(InputError, match="No space left"):
        _report().save(tmp_path / "run.tfdiag.json")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("given", "json_name", "prof_name"),
    [
        ("a.tfdiag.json", "a.tfdiag.json", "a.prof"),
        ("a.json", "a.json", "a.prof"),
        ("a", "a.tfdiag.json", "a.prof"),
        ("dir/ünï côde.tfdiag.json", "ünï côde.tfdiag.json", "ünï côde.prof"),
    ],
)
def test_report_paths_share_a_stem(given: str, json_name: str, prof_name: str) -> None:
    j, p = report_paths(given)
    assert (j.name, p.name) == (json_name, prof_name)


def test_newer_schema_is_refused_with_one_line(tmp_path: Path) -> None:
    doc = _report().to_json()
    doc["schema_version"] = SCHEMA_VERSION + 1
    path = tmp_path / "new.tfdiag.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="newer tfdiag") as info:
        load_report(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty file"),
        (b'{"schema_version": 1, "timing": ', "corrupt JSON"),
        (b'{"hello": 1}', "no schema_version"),
        (b'{"schema_version": 1, "timing": {"iterations": 3}, "profile": {}}', "profile"),
        (
            b'{"schema_version": 1, "timing": {"iterations": "x"}, "profile": {"functions": []}}',
            "iterations must be a whole number",
        ),
        (b"\x00\x01garbage", "neither a tfdiag report nor pstats"),
    ],
)
def test_bad_files_give_one_clear_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / ("bad.tfdiag.json" if content.startswith(b"{") else "bad.prof")
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        load_report(path)
    assert "\n" not in str(info.value)


def test_truncated_report_is_refused(tmp_path: Path) -> None:
    good = tmp_path / "good.tfdiag.json"
    _report().save(good)
    cut = tmp_path / "cut.tfdiag.json"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(InputError, match="corrupt JSON"):
        load_report(cut)


def test_missing_path_and_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_report(tmp_path / "nope.tfdiag.json")
    with pytest.raises(InputError, match="is a folder"):
        load_report(tmp_path)


def test_repr_is_one_short_line_and_runs_no_analysis() -> None:
    report = _report()
    assert repr(report) == "<tfdiag.Report Model.predict: 10 iterations, 50 ms median>"
    assert "_diagnosed" not in vars(report)  # repr did not analyse the report
    assert report.findings
    text = repr(report)
    assert text.startswith("<tfdiag.Report Model.predict: 10 iterations, 50 ms median;")
    assert "per-call-input-pipeline" in text and "\n" not in text and len(text) < 200
