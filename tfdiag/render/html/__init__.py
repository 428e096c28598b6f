"""One self-contained HTML page per result: ``report.save("run.html")``, ``to_html()``,
``--format html``.

A report's page has its header, findings, timeline (inline SVG), tables and interactive
flame graphs (d3-flame-graph over d3, vendored in ``vendor/`` with their licences and
inlined, so the page opens offline from an attachment). Compare, bench and script results
get their console view as HTML tables and text (:func:`result_html`).
"""

from __future__ import annotations

from typing import Any

from tfdiag.render.html.page import e, page
from tfdiag.render.html.patch import COPY_DRIVER, STYLE
from tfdiag.render.html.report import report_html
from tfdiag.render.html.rich_html import to_html

__all__ = ["report_html", "result_html"]

_TITLES = {
    "compare": "comparison",
    "bench": "benchmark",
    "script": "script run",
    "diff": "diff of two runs",
}


def result_html(result: Any, view: Any) -> str:
    """The page of a compare, bench, script or diff result: its console view (``view``) as HTML."""
    what = _TITLES.get(result.kind, result.kind)
    body = f"<h1>tfdiag · {e(what)}</h1>{to_html(view)}"
    if 'class="copy-diff"' in body:  # a patch block: its style and its copy button's script
        return page(f"tfdiag · {what}", body, scripts=False, style=STYLE, driver=COPY_DRIVER)
    return page(f"tfdiag · {what}", body, scripts=False)
