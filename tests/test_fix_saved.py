"""A saved `tfdiag fix` result is a run report like the others: its JSON carries each
finding's patch (`patch`, `patch_reason`, `verified`) additively, `explain` and the HTML page
show the patch block under the fix (the page's diff escaped, copyable exactly, inside 760
px), and `tfdiag diff` of it and a run of the patched program says the patch's effect on its
site. Synthetic records, no TensorFlow: a few seconds (the browser's tests included)."""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

from browser import clicked, load, scroll_width
from conftest import run_cli
from synth import keras3_predict_report

import tfdiag
from tfdiag.fix.patch import Proposal
from tfdiag.records.patches import FixRecord, PatchRecord, Verified
from tfdiag.records.script import CallSite
from tfdiag.results.script import ScriptResult

#: A diff whose lines would be markup, a terminal escape and a tab if they were not data.
HOSTILE = "</pre><script>console.error('xss')</script><img src=x onerror=console.error(1)>"
DIFF = (
    "diff --git a/p.py b/p.py\n"
    "--- a/p.py\n"
    "+++ b/p.py\n"
    "@@ -10,2 +10,2 @@\n"
    " for i in range(0, 160, 8):\n"
    f"-    y = model.predict(x[i : i + 8], verbose=0)  # {HOSTILE}\n"
    f"+    y = model.predict_on_batch(x[i : i + 8])\t# {HOSTILE} \x1b[31mred\n"
)
FINDING = "per-call-input-pipeline"
VERIFIED = Verified(True, 194.0, 0.3537, 0.0018, "per call", "outputs match", 2)
PATCH = PatchRecord(
    FINDING,
    location="p.py:11",
    kind="predict-on-batch",
    patch=DIFF,
    summary="`model.predict(...)` → `model.predict_on_batch(x[i : i + 8])`",
    file="p.py",
    line=11,
    new_line=11,
    verified=VERIFIED,
)
OLD_CODE = "y = model.predict(x[i : i + 8], verbose=0)"
NEW_CODE = "y = model.predict_on_batch(x[i : i + 8])"


def _run(fix: FixRecord | None = None) -> ScriptResult:
    """A `tfdiag run` of p.py whose predict at line 11 builds a pipeline per call."""
    site = CallSite(
        file="p.py",
        line=11,
        method="predict",
        owner="Sequential",
        code=OLD_CODE,
        calls=20,
        total_s=7.0,
        profiled_calls=2,
        call_s=(0.36, 0.36, *(0.35,) * 18),
        report=keras3_predict_report(),
    )
    return ScriptResult("p.py", (), 8.0, "ok", (site,), iterations=1, fix=fix)


def _patched_run(code: str = NEW_CODE, per_call_s: float = 0.0018) -> ScriptResult:
    """A `tfdiag run` of the patched p.py: the site's calls fast, no finding."""
    site = CallSite(
        file="p.py",
        line=11,
        method="predict_on_batch",
        owner="Sequential",
        code=code,
        calls=20,
        total_s=20 * per_call_s,
        call_s=(per_call_s,) * 20,
    )
    return ScriptResult("p.py", (), 1.5, "ok", (site,), iterations=1)


def _saved(tmp_path: Path, result: ScriptResult, name: str = "fix.tfdiag.json") -> Path:
    return result.save(tmp_path / name)


# -- the JSON -------------------------------------------------------------------------


def test_a_saved_fix_result_carries_each_findings_patch_and_loads_back(tmp_path: Path) -> None:
    fix = FixRecord((PATCH,), runs=2, rtol=1e-3)
    path = _saved(tmp_path, _run(fix))
    doc = json.loads(path.read_text(encoding="utf-8"))
    (finding,) = [f for f in doc["findings"] if f["id"] == FINDING]
    assert finding["patch"] == DIFF
    assert finding["patch_reason"] is None
    assert finding["verified"]["ratio"] == 194.0
    assert finding["verified"]["figures"] == (
        "verified 194× (353.7 ms → 1.8 ms per call), outputs match"
    )
    assert doc["fix"]["offered"] == 1 and doc["fix"]["runs"] == 2
    back = tfdiag.load_result(path)
    assert back.fix == fix
    assert back.to_json()["findings"] == doc["findings"]  # written again the same


def test_a_finding_without_a_patch_says_why_and_an_unmeasured_one_has_no_figures(
    tmp_path: Path,
) -> None:
    why = PatchRecord(FINDING, kind="predict-on-batch", reason="`predict` gets `callbacks=`")
    doc = json.loads(_saved(tmp_path, _run(FixRecord((why,), runs=2))).read_text())
    (finding,) = [f for f in doc["findings"] if f["id"] == FINDING]
    assert finding["patch"] is None and finding["verified"] is None
    assert finding["patch_reason"] == "`predict` gets `callbacks=`"
    unmeasured = replace(PATCH, verified=None)
    doc = json.loads(_saved(tmp_path, _run(FixRecord((unmeasured,))), "u.json").read_text())
    (finding,) = [f for f in doc["findings"] if f["id"] == FINDING]
    assert finding["patch"] == DIFF and finding["verified"] is None


def test_the_json_change_is_additive_both_ways(tmp_path: Path) -> None:
    """A new file is an old file plus keys (an old reader reads what it read); an old file,
    without them, loads with no fix and its findings' patch keys null."""
    new = _run(FixRecord((PATCH,), runs=2)).to_json()
    old = _run().to_json()
    assert new.pop("fix") is not None
    for f in new["findings"]:
        assert {"patch", "patch_reason", "verified"} <= f.keys()
    for doc in (new, old):
        for f in doc["findings"]:
            for key in ("patch", "patch_reason", "verified"):
                f.pop(key)
    old.pop("fix")
    assert new == old
    # a file written before the fix record existed (tests/data/fix/script_report.json's kind)
    legacy = _run().to_json()
    legacy.pop("fix")
    for f in legacy["findings"]:
        for key in ("patch", "patch_reason", "verified"):
            f.pop(key)
    path = tmp_path / "old.tfdiag.json"
    path.write_text(json.dumps(legacy), encoding="utf-8")
    back = tfdiag.load_result(path)
    assert back.fix is None
    assert all(f["patch"] is None and f["patch_reason"] is None for f in back.to_json()["findings"])
    saved = Path(__file__).with_name("data") / "fix" / "script_report.json"
    assert tfdiag.load_result(saved).fix is None


def test_a_non_finite_figure_is_written_as_null_not_as_invalid_json(tmp_path: Path) -> None:
    failed = Verified(
        False, 0.0, 0.35, float("inf"), "per call", "", 1, "the patched program failed"
    )
    path = _saved(tmp_path, _run(FixRecord((replace(PATCH, verified=failed),))))
    back = tfdiag.load_result(path)
    assert back.fix.patches[0].verified.after_s == 0.0
    assert not back.fix.patches[0].offered


def test_a_proposal_shared_by_two_findings_is_recorded_for_each() -> None:
    p = Proposal(FINDING, "r", "p.py:11", "fix", at="p.py:11", shared=(("other", "p.py:12"),))
    own, other = p.records()
    assert (own.finding, own.at) == (FINDING, "p.py:11")
    assert (other.finding, other.at, other.location) == ("other", "p.py:12", "p.py:11")
    fix = FixRecord((own, other))
    assert fix.for_finding("other", "p.py:12") is other
    assert fix.for_finding("other", "elsewhere.py:1") is other  # the only one of its id
    assert fix.for_finding("missing") is None


# -- explain and the page ---------------------------------------------------------------


def test_explain_shows_the_patch_block_under_the_fix(tmp_path: Path) -> None:
    path = _saved(tmp_path, _run(FixRecord((PATCH,), runs=2)))
    proc = run_cli("explain", "--width", "150", str(path))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "patch line 11: verified 194× (353.7 ms → 1.8 ms per call), outputs match" in out
    fix_at = out.index("Fix:")
    assert fix_at < out.index("patch line 11") < out.index("-    y = model.predict(x[i : i + 8]")
    assert "+    y = model.predict_on_batch(x[i : i + 8])" in out
    assert HOSTILE in out and "\x1b" not in out  # data: shown, never a terminal escape
    why = PatchRecord(FINDING, reason="`predict` gets `callbacks=`")
    other = _saved(tmp_path, _run(FixRecord((why,), runs=2)), "why.tfdiag.json")
    proc = run_cli("explain", "--width", "150", str(other))
    assert "no patch: `predict` gets `callbacks=`" in proc.stdout
    plain = _saved(tmp_path, _run(), "plain.tfdiag.json")  # a `tfdiag run` report: no block
    proc = run_cli("explain", "--width", "150", str(plain))
    assert "patch line" not in proc.stdout and "no patch" not in proc.stdout
    assert "tfdiag fix:" not in proc.stdout


def _page(tmp_path: Path) -> Path:
    path = _saved(tmp_path, _run(FixRecord((PATCH,), runs=2)))
    proc = run_cli("explain", "--format", "html", str(path))
    assert proc.returncode == 0, proc.stderr
    page = tmp_path / "fix.html"
    page.write_text(proc.stdout, encoding="utf-8")
    return page


def test_the_page_shows_the_patch_block_with_the_diff_escaped(tmp_path: Path) -> None:
    text = _page(tmp_path).read_text(encoding="utf-8")
    block = text[text.index('<div class="patch"') :]
    assert "patch line 11: verified 194× (353.7 ms → 1.8 ms per call), outputs match" in block
    pre = block[block.index("<pre") : block.index("</pre>") + 6]
    assert "<script" not in pre and "<img" not in pre
    assert "&lt;/pre&gt;&lt;script&gt;" in pre
    shown = html.unescape(re.sub(r"<[^>]+>", "", pre))
    assert shown == DIFF.replace("\x1b", "")  # line by line, every character but the escape
    assert 'class="del"' in pre and 'class="add"' in pre and 'class="hunk"' in pre
    assert text.count('<button type="button" class="copy-diff"') == 1


def test_the_copy_button_copies_the_diff_exactly_in_a_browser(tmp_path: Path) -> None:
    page = _page(tmp_path)
    loaded = clicked(page, "button.copy-diff")
    assert loaded.console == (), loaded.console  # no script of the diff ran, nothing refused
    m = re.search(r'data-clipboard="([^"]*)"', loaded.dom)
    assert m, "the button copied nothing"
    assert json.loads(html.unescape(m.group(1))) == DIFF  # the tab and the escape included
    assert 'data-copied="yes"' in loaded.dom
    assert load(page).console == ()


def test_the_page_with_a_long_diff_line_fits_a_760_px_window(tmp_path: Path) -> None:
    long = replace(PATCH, patch=DIFF.replace("# ", "# " + "x" * 400, 1))
    path = _saved(tmp_path, _run(FixRecord((long,), runs=2)))
    page = tmp_path / "long.html"
    page.write_text(tfdiag.load_result(path).to_html(), encoding="utf-8")
    assert scroll_width(page, 760) <= 760


# -- tfdiag diff ------------------------------------------------------------------------


def test_diff_says_the_patchs_effect_on_its_site(tmp_path: Path) -> None:
    before = _saved(tmp_path, _run(FixRecord((PATCH,), runs=2)), "before.tfdiag.json")
    after = _saved(tmp_path, _patched_run(), "after.tfdiag.json")
    proc = run_cli("diff", "--width", "150", str(before), str(after))
    assert proc.returncode == 0, proc.stderr
    assert (
        "p.py:11 (predict-on-batch): 350.0 ms → 1.8 ms per call, 194× faster; "
        "per-call-input-pipeline resolved"
    ) in proc.stdout
    assert "tfdiag fix measured: verified 194× (353.7 ms → 1.8 ms per call)" in proc.stdout
    assert "AFTER is faster" in proc.stdout
    doc = json.loads(run_cli("diff", "--format", "json", str(before), str(after)).stdout)
    (effect,) = doc["patches"]
    assert effect["resolved"] is True and effect["applied"] is True
    assert effect["scope"] == "per call" and round(effect["speedup"]) == 194
    assert [c["id"] for c in doc["resolved"]] == [FINDING]


def test_diff_of_a_run_that_is_not_the_patched_program_says_so(tmp_path: Path) -> None:
    before = _saved(tmp_path, _run(FixRecord((PATCH,), runs=2)), "before.tfdiag.json")
    same = _saved(tmp_path, _run(), "same.tfdiag.json")  # the original run again
    proc = run_cli("diff", "--width", "200", str(before), str(same))
    assert proc.returncode == 0, proc.stderr
    assert "per-call-input-pipeline still found at the site" in proc.stdout
    assert "AFTER still runs p.py:11 as it was before the patch" in proc.stdout


def test_diffs_gate_keeps_its_exit_code_for_run_results(tmp_path: Path) -> None:
    before = _saved(tmp_path, _run(FixRecord((PATCH,), runs=2)), "before.tfdiag.json")
    after = _saved(tmp_path, _patched_run(), "after.tfdiag.json")
    assert run_cli("diff", "--fail-if-slower", "1.2", str(before), str(after)).returncode == 0
    slow = _saved(tmp_path, replace(_patched_run(), wall_s=20.0), "slow.tfdiag.json")
    proc = run_cli("diff", "--fail-if-slower", "1.2", str(before), str(slow))
    assert proc.returncode == 3, proc.stderr
    assert "AFTER is slower than 1.2 × BEFORE" in proc.stderr
    report = tmp_path / "profile.tfdiag.json"
    keras3_predict_report().save(report)
    proc = run_cli("diff", str(before), str(report))
    assert proc.returncode == 2 and "two of one kind" in proc.stderr


# -- tfdiag fix --out's save rules ------------------------------------------------------


def _report_of(folder: Path, script: str) -> Path:
    doc = json.loads((Path(__file__).with_name("data") / "fix" / "script_report.json").read_text())
    doc.update(script=script, argv=[])
    path = folder / "r.tfdiag.json"
    path.write_text(json.dumps(doc))
    return path


def test_fix_out_refuses_an_existing_file_before_anything_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "s.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    report = _report_of(tmp_path, "s.py")
    out = tmp_path / "fix.tfdiag.json"
    out.write_text("mine")
    proc = run_cli("fix", "--out", str(out), "--report", str(report), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert out.read_text() == "mine" and not marker.exists()
    folder = tmp_path / "folder.tfdiag.json"
    folder.mkdir()
    proc = run_cli("fix", "--out", str(folder), "--force", "--report", str(report), cwd=tmp_path)
    assert proc.returncode == 2 and "folder" in proc.stderr and not marker.exists()


def test_fix_out_with_force_saves_a_report_explain_reads(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("print(sum(range(10)))\n")
    report = _report_of(tmp_path, "s.py")
    out = tmp_path / "fix.tfdiag.json"
    out.write_text("mine")
    proc = run_cli("fix", "--out", str(out), "--force", "--report", str(report), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"saved {out}" in proc.stderr
    saved = tfdiag.load_result(out)
    assert saved.fix == FixRecord((), runs=2, rtol=1e-3)  # nothing to fix, and said so
    assert json.loads(out.read_text())["fix"]["patches"] == []
    assert run_cli("explain", str(out)).returncode == 0
