"""The HTML page in a real browser (headless Chromium): the findings are in the rendered
DOM, d3-flame-graph drew both flame graphs, the timeline is there, and the page logged
nothing to the console — no error, no blocked request, no script of a report's strings; and
no page tfdiag writes, nor the snakeviz page it serves, requests anything off the machine
(Chromium's NetLog, :mod:`browser`).

Built from synthetic records (no TensorFlow), so it runs in a few seconds.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from browser import load, scroll_width
from synth import SITE, full_set_report

from tfdiag.records.probes import Probes, SampledStack, SamplingRecord

#: Would log to the console if the page ran it: as a script, as an element's handler, as
#: an image request (which the page's Content-Security-Policy would refuse, also logged).
XSS = "</script><script>console.error('xss')</script><img src=x onerror=console.error(1)>"


def _report(name: str = "Trainer.predict") -> object:
    base = full_set_report()
    times = (0.4, 0.06, *(0.05 + 0.001 * (i % 3) for i in range(18)))
    frames = (
        (SITE + "keras/src/trainers/trainer.py", 10, name),
        (SITE + "keras/src/trainers/data_adapters/array_data_adapter.py", 5, "get_tf_dataset"),
        (SITE + "tensorflow/python/eager/execute.py", 50, "quick_execute"),
    )
    sampling = SamplingRecord(
        interval_s=0.005,
        iteration_s=times,
        frames=frames,
        stacks=(
            SampledStack((0, 1), 60, 0.3),
            SampledStack((0, 2), 20, 0.1),
            SampledStack((0,), 4, 0.02),
        ),
    )
    return replace(
        base,
        timing=replace(base.timing, iteration_s=times),
        probes=Probes(sampling=sampling, trace_files=base.probes.trace_files),  # type: ignore[union-attr]
    )


def _page(tmp_path: Path, report: object) -> Path:
    (path,) = report.save(tmp_path / "run.html")  # type: ignore[attr-defined]
    return Path(path)


def _drawn(dom: str, element: str) -> int:
    m = re.search(rf'id="{element}"[^>]*data-drawn="(\d+)"', dom) or re.search(
        rf'data-drawn="(\d+)"[^>]*id="{element}"', dom
    )
    assert m, f"{element}: not drawn ({'data-error' in dom and 'a script error' or 'no mark'})"
    return int(m.group(1))


def test_the_page_renders_its_findings_and_flame_graphs(tmp_path: Path) -> None:
    page = load(_page(tmp_path, _report()))
    assert page.console == (), page.console
    dom = page.dom
    assert 'id="finding-per-call-input-pipeline"' in dom
    assert "data-error=" not in dom
    # d3-flame-graph drew a frame (an svg g.frame with its rect) per node of each tree
    assert _drawn(dom, "flame-profile") >= 3
    assert _drawn(dom, "flame-sampled") == 4  # the root and the three sampled frames
    assert dom.count('class="frame"') >= 7 and "<rect" in dom
    assert "get_tf_dataset" in dom.split('id="flame-sampled"', 1)[1]
    # the timeline's clipped cold iteration is named in the legend, not drawn over the line
    assert "#1: 400.0 ms, off the scale" in dom
    assert "<polyline" in dom


def test_a_hostile_function_name_is_text_in_the_browser(tmp_path: Path) -> None:
    page = load(_page(tmp_path, _report(XSS)))
    assert page.console == (), page.console  # nothing ran, nothing was requested
    dom = page.dom.split('id="flame-sampled"', 1)[1]
    assert _drawn(page.dom, "flame-sampled") == 4
    # the name reached the flame graph as text: escaped in the DOM, not parsed as markup
    assert "&lt;/script&gt;&lt;script&gt;console.error('xss')" in dom
    assert "<img src=x" not in page.dom


def _pages(tmp_path: Path) -> list[Path]:
    """Every page tfdiag writes: the report's page and pyinstrument's sampling page, and the
    page of every other result kind (compare, bench, script, a merged job), from results
    that carry hostile strings."""
    from test_injection import hostile_bench, hostile_compare, hostile_report, hostile_script
    from test_merge import worker

    import tfdiag

    written = [p for p in _report().save(tmp_path / "run") if p.name.endswith(".html")]  # type: ignore[attr-defined]
    written += [p for p in hostile_report().save(tmp_path / "hostile") if p.name.endswith(".html")]
    written.append(_page(tmp_path, hostile_report()))  # run.html: the report's own page
    job = tfdiag.merge([worker(0, cycle_ms=62, fn_ms=60), worker(1, cycle_ms=62, fn_ms=8)])
    for name, result in (
        ("compare", hostile_compare()),
        ("bench", hostile_bench()),
        ("script", hostile_script()),
        ("job", job),
    ):
        saved = result.save(tmp_path / f"{name}.html")  # type: ignore[attr-defined]
        written.append(Path(saved[0] if isinstance(saved, tuple) else saved))
    return written


def test_no_page_tfdiag_writes_makes_a_request_off_the_machine(tmp_path: Path) -> None:
    # pyinstrument's .sampling.html asked fonts.googleapis.com for its fonts (#20.13)
    pages = _pages(tmp_path)
    assert sorted(p.name for p in pages) == [
        "bench.html", "compare.html", "hostile.sampling.html", "job.html", "run.html",
        "run.sampling.html", "script.html",
    ]  # fmt: skip
    for page in pages:
        loaded = load(page, settle_ms=2000)
        assert loaded.off_machine == (), (page.name, loaded.off_machine)
        assert loaded.console == (), (page.name, loaded.console)  # nothing refused either
    assert "fonts.googleapis.com" not in (tmp_path / "run.sampling.html").read_text()


def test_the_snakeviz_page_makes_no_request_off_the_machine(tmp_path: Path) -> None:
    # the page tfdiag serves loaded immutable and lodash from cdnjs in its worker (#20.13)
    from synth import keras3_predict_report
    from test_snakeviz_server import Server, _free_port

    json_path = keras3_predict_report().save(tmp_path / "run")[0]
    (tmp_path / "tmp").mkdir()
    server = Server(json_path, _free_port(), tmp_path / "tmp")
    try:
        loaded = load(server.url(), settle_ms=5000)
    finally:
        server.stop()
    assert loaded.off_machine == (), loaded.off_machine
    assert loaded.console == (), loaded.console  # its Content-Security-Policy refused nothing
    local = [u.split("/", 3)[-1] for u in loaded.requests]
    assert "static/vendor/d3.v3.min.js" in local, loaded.requests  # its own, from tfdiag
    # once for the page's <script>, once for its worker's importScripts: both from tfdiag
    assert local.count("static/vendor/immutable.min.js") == 2, loaded.requests
    assert "<svg" in loaded.dom


def test_the_page_fits_a_760_px_window(tmp_path: Path) -> None:
    """A laptop's half screen: the wide tables (culprits, TF ops) scroll in their own box, so
    the page itself is never wider than the window (it was 764 px here, 917 px on a real run
    in issue 35)."""
    page = _page(tmp_path, _report())
    assert "data-scroll-width" not in page.read_text(encoding="utf-8")
    assert scroll_width(page, 760) <= 760
