"""Strings read from a file, made safe to show: on a terminal, in an error line, inside
HTML. Plain Python; the renderers (:mod:`tfdiag.render.safe`) and the CLI's error lines use
it."""

from __future__ import annotations

import re

#: C0 controls but tab and newline (ESC starts every terminal escape: titles, screen
#: clears, OSC 52 clipboard writes, hyperlinks), DEL, C1 controls (0x9b is a one-byte CSI),
#: lone surrogates (no terminal encoding can write them), and every invisible or layout
#: character: Unicode's format characters (category Cf: zero-width space, joiners, the
#: direction marks, embeddings, overrides and isolates, the BOM, the tag characters
#: U+E0000–U+E007F that hide a whole text in an emoji), the line and paragraph separators
#: U+2028/U+2029, the combining grapheme joiner, the invisible Khmer
#: vowels and the variation selectors. None of them is seen on a terminal: they make a name
#: read differently than it is, or two different names read the same.
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u0600-\u0605\u061c\u06dd\u070f"
    "\u0890\u0891\u08e2\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u2028-\u202e\u2060-\u206f\ud800-\udfff\ufe00-\ufe0f\ufeff"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace(match: re.Match[str]) -> str:
    return "\ufffd" if _SURROGATE.match(match.group()) else ""


def clean(text: str) -> str:
    """``text`` with every control, invisible and layout character (:data:`UNSAFE`)
    removed and lone surrogates replaced by U+FFFD.

    What is removed has no width on a terminal, so a line laid out before cleaning keeps
    its alignment.
    """
    return UNSAFE.sub(_replace, text) if UNSAFE.search(text) else text


def json_for_script(text: str) -> str:
    """JSON text made safe inside an HTML ``<script>`` element: ``<``, ``>``, ``&`` and the
    JavaScript line separators as ``\\u`` escapes. Outside its strings JSON has none of
    these, so the value is unchanged and nothing in it can close the element."""
    for char, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return text
