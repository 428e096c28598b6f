"""The HTML page without a browser: one file through the hardened save path, nothing to
fetch, every string escaped, the flame-graph trees well formed, verification shown when a
finding carries one. (tests/test_browser.py opens it in Chromium.)"""

from __future__ import annotations

import html as html_lib
import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from synth import Node, build_stats, full_set_report
from test_injection import RESULTS, SCRIPT

import tfdiag
from tfdiag.advise import Finding
from tfdiag.records.errors import InputError
from tfdiag.records.verification import VariantRun, Verification
from tfdiag.render.findings import verification_lines
from tfdiag.render.html.flame import MAX_NODES, profile_tree
from tfdiag.render.html.page import SCRIPTS, VENDOR
from tfdiag.render.html.report import finding_html


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.fetching: list[tuple[str, str, str | None]] = []
        self.scripts: list[dict[str, str | None]] = []
        self.data: dict[str, str] = {}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "srcset", "action", "poster", "data"):
                self.fetching.append((tag, name, value))
        if tag == "link":
            self.fetching.append((tag, "link", None))
        if tag == "script":
            a = dict(attrs)
            self.scripts.append(a)
            self._in = a.get("id") if a.get("type") == "application/json" else None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.data[self._in] = self.data.get(self._in, "") + data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in = None


def _parsed(page: str) -> _Tags:
    tags = _Tags()
    tags.feed(page)
    return tags


def test_save_writes_one_self_contained_page(tmp_path: Path) -> None:
    report = full_set_report()
    written = report.save(tmp_path / "run.html")
    assert written == (tmp_path / "run.html",)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.html"]
    page = written[0].read_text(encoding="utf-8")
    assert page == report.to_html() == report.render("html")
    tags = _parsed(page)
    assert tags.fetching == []  # no src, href or <link>: nothing is loaded from anywhere
    assert "@import" not in page and "url(" not in page.split("<script", 1)[0]
    assert "default-src 'none'" in page  # and the CSP refuses any request that might remain
    assert len([s for s in tags.scripts if not s.get("type")]) == len(SCRIPTS) + 1
    assert "per-call-input-pipeline" in page


def test_save_of_a_page_goes_through_the_hardened_path(tmp_path: Path) -> None:
    report = full_set_report()
    report.save(tmp_path / "run.html")
    with pytest.raises(InputError, match="exists"):
        report.save(tmp_path / "run.html")
    (tmp_path / "other.html").mkdir()
    with pytest.raises(InputError):
        report.save(tmp_path / "other.html", overwrite=True)  # a folder is never replaced
    assert report.save(tmp_path / "run.html", overwrite=True) == (tmp_path / "run.html",)


def test_sampling_html_keeps_pyinstruments_page(tmp_path: Path) -> None:
    (path,) = full_set_report().save(tmp_path / "run.sampling.html")
    assert "sessionData" in path.read_text()  # the longer suffix picks pyinstrument's page


def test_the_embedded_data_round_trips_every_string(tmp_path: Path) -> None:
    report = RESULTS["profile"]()
    page = report.to_html()
    benign = full_set_report().to_html()
    assert page.count("</script>") == benign.count("</script>")  # nothing closed a <script>
    assert "<script>alert" not in page
    tags = _parsed(page)
    flame = json.loads(tags.data["flame-sampled-data"])
    names = [n["name"] for n in _walk(flame)]
    assert any(SCRIPT in n for n in names)  # the name is data, whole, and not markup


@pytest.mark.parametrize("kind", ["compare", "bench", "script"])
def test_the_other_results_have_a_page_too(kind: str, tmp_path: Path) -> None:
    result = RESULTS[kind]()
    written = result.save(tmp_path / f"{kind}.html")
    path = written[0] if isinstance(written, tuple) else written
    assert path == tmp_path / f"{kind}.html" and len(list(tmp_path.iterdir())) == 1
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<table>" in page
    assert "<script" not in page and _parsed(page).fetching == []
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page  # the hostile strings, as text


def test_explain_writes_the_page(tmp_path: Path) -> None:
    (json_path, *_) = full_set_report().save(tmp_path / "run")
    proc = run_cli("explain", str(json_path), "--format", "html")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == tfdiag.load_report(json_path).to_html()


def _walk(node: dict[str, Any]) -> list[dict[str, Any]]:
    out = [node]
    for child in node.get("children", ()):
        out += _walk(child)
    return out


def _check_tree(node: dict[str, Any]) -> None:
    kids = node.get("children", [])
    assert sum(k["value"] for k in kids) <= node["value"] + len(kids)  # rounding to 1 µs
    for k in kids:
        _check_tree(k)


def test_the_profile_tree_splits_a_shared_callee_by_its_callers() -> None:
    shared = lambda s: Node("/app/lib.py", "shared", s)  # noqa: E731
    a = Node("/app/m.py", "a", 0.1, children=[shared(0.3)])
    b = Node("/app/m.py", "b", 0.1, children=[shared(0.1)])
    tree = profile_tree(build_stats([Node("/app/m.py", "main", 0.0, children=[a, b])]))
    assert tree is not None
    _check_tree(tree)
    (main,) = tree["children"]
    by_name = {c["name"]: c for c in main["children"]}
    assert by_name["m.py:a"]["value"] == 400_000 and by_name["m.py:b"]["value"] == 200_000
    assert by_name["m.py:a"]["children"][0] == {"name": "lib.py:shared", "value": 300_000}
    assert by_name["m.py:b"]["children"][0] == {"name": "lib.py:shared", "value": 100_000}


def test_the_profile_tree_survives_recursion_and_is_bounded() -> None:
    def chain(depth: int) -> Node:
        node = Node("/app/r.py", "rec", 0.001, children=[])
        if depth:
            node.children.append(chain(depth - 1))
        return node

    wide = Node("/app/m.py", "main", 0.0, children=[chain(30)])
    wide.children += [Node("/app/w.py", f"f{i}", 0.01, line=i) for i in range(MAX_NODES * 2)]
    tree = profile_tree(build_stats([wide]))
    assert tree is not None
    _check_tree(tree)
    assert len(_walk(tree)) <= MAX_NODES + 3


def _verified(note: str = SCRIPT) -> Verification:
    """A finding's verification as verify makes it: a two-line fix (built once, then
    called), its figures and check, a note."""
    fix = "predict_fn = tf.function(lambda x: model(x))  # once\npredict_fn(x).numpy()"
    run = VariantRun(
        "predict_fn", fix, times_s=(0.004, 0.0041, 0.0039), check="outputs match", passed=True
    )
    return Verification(
        "per-call-input-pipeline",
        baseline="model.predict(x)",
        baseline_times_s=(0.05, 0.051, 0.049),
        variants=(run,),
        notes=(note,),
    )


def test_a_findings_verification_reads_as_the_consoles() -> None:
    """The page shows a verification as the console does (issue 35: it listed the record's
    keys, `baseline_median_s 0.07688`, `bound_speedup None`, and joined the two-line fix so
    the call sat after the `# once` comment)."""
    v = _verified()
    finding = Finding(
        "per-call-input-pipeline", "A pipeline per call", "high", 0.9, (), "f", verification=v
    )
    html = finding_html(1, finding)
    (block,) = re.findall(r'<pre class="verification">(.*?)</pre>', html, re.S)
    console = [line.plain for line in verification_lines(v, body="")]
    assert html_lib.unescape(block) == "\n".join(console)
    assert "Verification: verified 12.5× faster with predict_fn" in console[0]
    # the fix's two lines stay two lines: pasted, the call is not commented out
    assert any(line.strip() == "predict_fn(x).numpy()" for line in block.split("\n"))
    for raw in ("baseline_median_s", "bound_speedup", "None", "<dt>"):
        assert raw not in html
    assert "<script>" not in html and "&lt;/script&gt;" in html  # the note is data
    plain = replace(finding, verification=None)
    assert "verification" not in finding_html(1, plain)


def test_the_vendored_libraries_keep_their_licences() -> None:
    names = {p.name for p in VENDOR.iterdir()}
    assert set(SCRIPTS) <= names and {"LICENSE.d3", "LICENSE.d3-flame-graph"} <= names
    readme = (VENDOR / "README.md").read_text()
    for script in SCRIPTS:
        assert script in readme
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'"tfdiag\.render\.html"\s*=\s*\[[^]]*"vendor/\*"', pyproject)


def test_the_page_and_the_console_describe_the_run_alike() -> None:
    """One header for both views: 5 traced calls named apart from the 20 plain ones, and
    the busy machine said on the page as in the terminal (the page once said "median of
    25 with no profiler attached" and nothing of the load)."""
    from dataclasses import replace
    from html import escape

    from tfdiag.records.machine import MachineLoad
    from tfdiag.render.html.report import report_html

    report = full_set_report()
    timing = replace(report.timing, iteration_s=(0.2,) * 5 + (0.1,) * 20, traced=5)
    machine = MachineLoad(cpus=2, other_cores=1.8, loadavg=6.4)
    report = replace(report, timing=timing, machine=machine)
    page = report_html(report.diagnosis)
    text = report.render(width=200)
    for said in (
        "median of 20 plain call(s) with no profiler attached",
        "5 more under the TF profiler (median 200.0 ms)",
        machine.describe(),
    ):
        assert said in text
        assert escape(said) in page, said
    assert "median of 25" not in page
