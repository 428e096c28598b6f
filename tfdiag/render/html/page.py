"""The page skeleton: escaping, the inline style, the vendored scripts, the flame-graph
driver. Everything a page needs is in it — no link, no font, no request leaves the file.

Every string that came from a report goes through :func:`e` (control characters removed,
``& < > " '`` escaped); data for the scripts is JSON in a ``<script
type="application/json">`` element, made safe by :func:`json_for_script`, so a function
named ``</script><script>...`` is text in the page and nothing else.
"""

from __future__ import annotations

import json
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any

from tfdiag.records.text import clean, json_for_script

VENDOR = Path(__file__).with_name("vendor")
#: The vendored scripts, in load order (see vendor/README.md for versions and licences).
SCRIPTS = ("d3.v7.min.js", "d3-flamegraph.umd.min.js")


def e(text: object) -> str:
    """``text`` as HTML text or an attribute value."""
    return escape(clean(str(text)), quote=True)


@lru_cache(maxsize=1)
def vendored() -> str:
    """The vendored scripts as inline ``<script>`` elements (checked: none can close early)."""
    parts = []
    for name in SCRIPTS:
        code = (VENDOR / name).read_text(encoding="utf-8")
        if "</script" in code.lower() or "<!--" in code:
            raise RuntimeError(f"{name}: cannot be inlined in a <script> element as it is")
        parts.append(f"<script>/* {name}: see tfdiag/render/html/vendor/ */\n{code}\n</script>")
    return "\n".join(parts)


def data_script(element_id: str, value: Any) -> str:
    """``value`` as JSON inside a non-executing script element the driver reads."""
    text = json_for_script(json.dumps(value, separators=(",", ":"), allow_nan=False))
    return f'<script type="application/json" id="{e(element_id)}">{text}</script>'


STYLE = """
:root { --fg:#1d232a; --dim:#5b6570; --line:#d8dde3; --bg:#fff; --accent:#1f6feb; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); margin: 0 auto; padding: 16px 24px 48px;
  max-width: 1200px; }
h1 { font-size: 20px; margin: 8px 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px;
  border-bottom: 1px solid var(--line); padding-bottom: 4px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; padding: 8px 10px;
  border-radius: 6px; margin: 6px 0; }
dl.head { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 8px 0; }
dl.head dt { font-weight: 600; } dl.head dd { margin: 0; overflow-wrap: anywhere; }
.partial { color: #b42318; font-weight: 600; }
.scroll { overflow-x: auto; } p.caption { color: var(--dim); font-size: 12.5px; }
#your-lines td:nth-child(n+3) { text-align: left; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 6px 0 4px; width: 100%; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: right;
  vertical-align: top; }
th { background: #f3f5f7; font-weight: 600; } th:first-child, td:first-child { text-align: left; }
td.name { text-align: left; font-family: ui-monospace, Menlo, Consolas, monospace;
  font-size: 12.5px; overflow-wrap: anywhere; }
caption { caption-side: bottom; text-align: left; color: var(--dim); font-size: 12.5px;
  padding-top: 2px; }
.finding { border: 1px solid var(--line); border-left: 5px solid #8c959f; border-radius: 6px;
  padding: 8px 12px; margin: 10px 0; }
.finding.high { border-left-color: #d1242f; } .finding.medium { border-left-color: #d4a72c; }
.finding h3 { font-size: 15px; margin: 0 0 4px; } .finding .sev { text-transform: uppercase;
  font-size: 11px; font-weight: 700; letter-spacing: .04em; margin-right: 6px; }
.finding .impact { color: var(--dim); font-weight: 400; font-size: 13px; }
.finding ul { margin: 4px 0; padding-left: 20px; }
.fix-label { color: #1a7f37; font-weight: 600; }
.verification { background: #f6f8fa; border-radius: 6px; padding: 6px 10px; margin-top: 6px;
  white-space: pre-wrap; overflow-x: auto; }
figure.timeline { margin: 8px 0; } figure.timeline svg { max-width: 100%; height: auto; }
figure.timeline text { font-size: 11px; fill: var(--dim); }
.grid { stroke: var(--line); stroke-width: 1; }
.series { fill: none; stroke: var(--accent); stroke-width: 1.6; }
.median { stroke: #8c959f; stroke-dasharray: 3 3; }
rect.warmup, i.warmup { fill: #fb8f44; background: #fb8f44; opacity: .22; }
.spike, i.spike { fill: #d1242f; background: #d1242f; }
.drift { stroke: #8250df; stroke-dasharray: 6 4; stroke-width: 1.4; }
i.drift { background: #8250df; } i.series { background: var(--accent); }
i.median { background: #8c959f; } .clip { fill: #fb8f44; }
figcaption { display: flex; flex-wrap: wrap; gap: 4px 16px; color: var(--dim);
  font-size: 12.5px; }
figcaption i { display: inline-block; width: 12px; height: 10px; margin-right: 5px;
  vertical-align: baseline; }
.flame-tools { display: flex; gap: 8px; align-items: center; margin: 4px 0; }
.flame-tools input { font: inherit; padding: 2px 6px; width: 260px; }
.flame-details { color: var(--dim); min-height: 1.4em; font-size: 12.5px;
  overflow-wrap: anywhere; }
.flame { width: 100%; min-height: 40px; }
.flame .d3-flame-graph-label { font: 11.5px/1.5 system-ui, -apple-system, "Segoe UI", Roboto,
  sans-serif; }
pre.text { background: none; padding: 0; }
.notes { color: var(--dim); font-size: 12.5px; }
footer { margin-top: 36px; color: var(--dim); font-size: 12px; }
"""

#: Draws every ``.flame`` element from the JSON its ``data-source`` names, with
#: d3-flame-graph; records what it drew (``data-drawn``) and any error (``data-error``)
#: on the element, so a test reads the DOM rather than pixels.
DRIVER = r"""
(function () {
  function ms(us) { return us >= 1e6 ? (us / 1e6).toFixed(2) + " s"
    : (us / 1e3).toFixed(us >= 1e5 ? 0 : us >= 1e4 ? 1 : 2) + " ms"; }
  document.querySelectorAll(".flame").forEach(function (box) {
    try {
      var source = document.getElementById(box.getAttribute("data-source"));
      var data = JSON.parse(source.textContent);
      var total = data.value || 1;
      var details = document.getElementById(box.id + "-details");
      var chart = flamegraph.default()
        .width(Math.max(box.clientWidth || 1000, 320))
        .cellHeight(18).inverted(true).minFrameSize(1).transitionDuration(0)
        .label(function (d) {
          return d.data.name + " \u2014 " + ms(d.data.value) + " (" +
            (100 * d.data.value / total).toFixed(1) + " %)";
        });
      if (details) chart.setDetailsElement(details);
      d3.select(box).datum(data).call(chart);
      var tools = document.getElementById(box.id + "-tools");
      if (tools) {
        tools.querySelector("input").addEventListener("input", function (ev) {
          if (ev.target.value) chart.search(ev.target.value); else chart.clear();
        });
        tools.querySelector("button").addEventListener("click", function () {
          chart.resetZoom();
        });
      }
      box.setAttribute("data-drawn", String(box.querySelectorAll("svg g.frame").length));
    } catch (err) {
      box.setAttribute("data-error", String(err));
      box.textContent = "The flame graph could not be drawn: " + err;
      throw err;
    }
  });
})();
"""


def flame_section(element_id: str, title: str, about: str, tree: dict[str, Any]) -> str:
    """One flame graph: its title, tools (search, reset zoom), the chart and its data."""
    i = e(element_id)
    return (
        f"<h2>{e(title)}</h2><p>{e(about)}</p>"
        f'<div class="flame-tools" id="{i}-tools"><input type="search" '
        f'placeholder="highlight functions matching…" aria-label="search"> '
        f'<button type="button">reset zoom</button></div>'
        f'<div class="flame-details" id="{i}-details"></div>'
        f'<div class="flame" id="{i}" data-source="{i}-data"></div>'
        + data_script(f"{element_id}-data", tree)
    )


def page(title: str, body: str, *, scripts: bool, style: str = "", driver: str = "") -> str:
    """The whole document; ``scripts`` inlines the vendored libraries and the driver;
    ``style`` and ``driver``: a block's own rules and script (a patch's copy button)."""
    tail = f"{vendored()}\n<script>{DRIVER}</script>" if scripts else ""
    if driver:
        tail += f"\n<script>{driver}</script>"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Nothing may be fetched: inline scripts and styles only, no connection at all.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{e(title)}</title><style>{STYLE}{style}</style></head>\n"
        f"<body>\n{body}\n{tail}\n</body></html>\n"
    )
