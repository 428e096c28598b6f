"""JSON text as tfdiag writes it for people: one space of indent per level, ASCII only.

The standard library's encoder only runs in C without ``indent``; with it, a 100k-function
report took 1.8 s to write. Here the C encoder writes compact text, refusing NaN and
Infinity as before (``allow_nan=False``), and msgspec re-indents it: the same bytes as
``json.dumps(doc, indent=1)``, about six times faster.

A report's function tables are most of its text (100k rows of eight values and two caller
edges each). :func:`indented_json` writes the top-level values its caller names in
``tables`` with msgspec's encoder, about five times the C encoder's speed, and from tuples
as they are: the same values, but a float may be spelled another way (``0.00001`` for
``1e-05``), and the caller vouches that no time in them is NaN or infinite (msgspec would
write ``null``; :meth:`~tfdiag.records.stats.ProfileStats.finite` checks a table). A table
that msgspec cannot write, or that holds text outside ASCII, is written by the standard
library, so the output stays ASCII (every other character an escape) either way.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any


def indented_json(doc: Any, *, tables: Collection[str] = ()) -> str:
    """``json.dumps(doc, indent=1, allow_nan=False)``, at the C encoder's speed; with
    ``tables`` (keys of the ``doc`` dict whose values hold only finite numbers), those
    values written by msgspec.

    Raises:
        ValueError: a NaN or infinite number in ``doc`` (outside ``tables``).
        TypeError: a value JSON cannot hold.
    """
    import msgspec

    if tables and isinstance(doc, dict):
        parts = []
        for key, value in doc.items():
            text = _table(value) if key in tables else None
            if text is None:
                text = json.dumps(value, allow_nan=False)
            parts.append(f"{json.dumps(key)}:{text}")
        compact = "{" + ",".join(parts) + "}"
    else:
        compact = json.dumps(doc, allow_nan=False)
    return msgspec.json.format(compact, indent=1)


def _table(value: Any) -> str | None:
    """``value`` as compact JSON by msgspec, or None where it cannot (a number out of its
    range, a lone surrogate) or where the text is not ASCII."""
    import msgspec

    try:
        data = msgspec.json.encode(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return data.decode("ascii") if data.isascii() else None
