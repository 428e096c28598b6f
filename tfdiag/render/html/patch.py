"""A finding's patch block on the page: the figures line, what the edit does, and the
unified diff as a ``<pre>`` (one ``<span>`` per line, escaped: a diff is text read from a
file, never markup) with a button that copies the diff exactly.

The button copies the diff from a JSON data element (:func:`data_script`), not from the
``<pre>``: the page's text is cleaned of control characters, the copy is the diff's every
byte. The ``<pre>`` scrolls in its own box, so a long line never widens the page.
"""

from __future__ import annotations

import hashlib

from tfdiag.render.html.page import data_script, e
from tfdiag.render.patch_block import PatchBlock

_CLASSES = {"+": "add", "-": "del", "@": "hunk"}

STYLE = """
.patch { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin: 6px 0;
  max-width: 100%; }
.patch .patch-head { font-weight: 600; overflow-wrap: anywhere; }
.patch .patch-head.offered { color: #1a7f37; } .patch .patch-head.not-offered { color: #9a6700; }
.patch .patch-summary { color: var(--dim); font-size: 12.5px; overflow-wrap: anywhere; }
.patch pre.patch-diff { white-space: pre; overflow-x: auto; overflow-wrap: normal; }
.patch pre.patch-diff .add { color: #116329; background: #dafbe1; }
.patch pre.patch-diff .del { color: #82071e; background: #ffebe9; }
.patch pre.patch-diff .hunk { color: #0550ae; } .patch pre.patch-diff .file { font-weight: 600; }
.patch button.copy-diff { font: inherit; font-size: 12.5px; padding: 1px 8px; }
.patch.none { color: var(--dim); border-style: dashed; }
"""

#: Each copy button copies its diff (from the JSON element it names) to the clipboard; it
#: says "copied" (``data-copied="yes"``) or, where the browser refuses, "select and copy".
COPY_DRIVER = r"""
(function () {
  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text; area.setAttribute("readonly", ""); area.style.position = "fixed";
    area.style.opacity = "0"; document.body.appendChild(area); area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (err) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }
  document.querySelectorAll("button.copy-diff").forEach(function (button) {
    button.addEventListener("click", function () {
      var text = JSON.parse(document.getElementById(button.getAttribute("data-source"))
        .textContent);
      function done(ok) {
        button.setAttribute("data-copied", ok ? "yes" : "no");
        button.textContent = ok ? "copied" : "select and copy";
      }
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { done(true); },
          function () { done(fallback(text)); });
      } else {
        done(fallback(text));
      }
    });
  });
})();
"""


def _line(line: str) -> str:
    body = line.rstrip("\n")
    if line.startswith(("diff ", "--- ", "+++ ")):
        cls = "file"
    else:
        cls = _CLASSES.get(line[:1], "")
    inner = e(body) + ("\n" if line.endswith("\n") else "")
    return f'<span class="{cls}">{inner}</span>' if cls else inner


def patch_html(block: PatchBlock) -> str:
    """The block as HTML: with a patch, its figures, summary, diff and copy button."""
    p = block.record
    if not p.patch:
        return f'<div class="patch none"><span class="patch-reason">{e(p.headline())}</span></div>'
    key = hashlib.sha256(f"{p.finding}\0{p.at}\0{p.patch}".encode()).hexdigest()[:12]
    pid = f"patch-{key}"
    state = "offered" if p.offered else "not-offered"
    diff = "".join(_line(x) for x in p.patch.splitlines(keepends=True))
    summary = f'<div class="patch-summary">{e(p.summary)}</div>' if p.summary else ""
    return (
        f'<div class="patch" id="{pid}">'
        f'<div class="patch-head {state}">patch {e(p.headline())}</div>{summary}'
        f'<pre class="patch-diff" id="{pid}-diff">{diff}</pre>'
        f'<button type="button" class="copy-diff" data-source="{pid}-data">copy diff</button>'
        + data_script(f"{pid}-data", p.patch)
        + "</div>"
    )
