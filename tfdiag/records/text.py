"""Strings read from a file, made safe to show: on a terminal, in an error line, inside
HTML. Plain Python; the renderers (:mod:`tfdiag.render.safe`) and the CLI's error lines use
it."""

from __future__ import annotations

import re

#: C0 controls but tab and newline (ESC starts every terminal escape: titles, screen
#: clears, OSC 52 clipboard writes, hyperlinks), DEL, C1 controls (0x9b is a one-byte CSI),
#: bidirectional overrides and isolates (text that reads differently than it is), and lone
#: surrogates (no terminal encoding can write them).
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace(match: re.Match[str]) -> str:
    return "\ufffd" if _SURROGATE.match(match.group()) else ""


def clean(text: str) -> str:
    """``text`` with every control character removed and lone surrogates replaced by U+FFFD.

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
