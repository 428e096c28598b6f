"""JSON text as tfdiag writes it for people: one space of indent per level.

The standard library's encoder only runs in C without ``indent``; with it, a 100k-function
report took 1.8 s to write. Here the C encoder writes compact text, refusing NaN and
Infinity as before (``allow_nan=False``), and msgspec re-indents it: the same bytes as
``json.dumps(doc, indent=1)``, about six times faster.
"""

from __future__ import annotations

import json
from typing import Any


def indented_json(doc: Any) -> str:
    """``json.dumps(doc, indent=1, allow_nan=False)``, at the C encoder's speed.

    Raises:
        ValueError: a NaN or infinite number in ``doc``.
        TypeError: a value JSON cannot hold.
    """
    import msgspec

    compact = json.dumps(doc, allow_nan=False)
    return msgspec.json.format(compact, indent=1)
