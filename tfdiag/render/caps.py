"""How much of a long list a view shows: a report may carry a million valid notes, a job a
thousand workers; the views show the first few and say how many they left out (the JSON
output has them all). A cap is a count of what is rendered, so a view's cost is bounded
whatever the input holds."""

from __future__ import annotations

from collections.abc import Sequence

#: Notes a view shows, and characters of each.
MAX_NOTES_SHOWN = 20
MAX_NOTE_CHARS = 2000
#: Worker rows the merge view's table shows (the fastest and slowest stay in its header).
MAX_WORKERS_SHOWN = 50


def shown_notes(notes: Sequence[str]) -> list[str]:
    """The first :data:`MAX_NOTES_SHOWN` notes, each cut at :data:`MAX_NOTE_CHARS`, then one
    line saying how many more there are."""
    out = [clip(n) for n in notes[:MAX_NOTES_SHOWN]]
    if len(notes) > MAX_NOTES_SHOWN:
        out.append(more(len(notes) - MAX_NOTES_SHOWN, "note"))
    return out


def clip(text: str, limit: int = MAX_NOTE_CHARS) -> str:
    """``text``, or its first ``limit`` characters and how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def more(n: int, what: str) -> str:
    """``… 3 more notes not shown (--format json has them all)``."""
    return f"… {n:,} more {what}{'' if n == 1 else 's'} not shown (--format json has them all)"


#: Addresses (or worker numbers) a one-line list shows.
MAX_LISTED = 10


def listed(items: Sequence[str], what: str, limit: int = MAX_LISTED) -> str:
    """``a, b, c`` or, past ``limit``, ``a, b, … and 990 more hosts``."""
    if len(items) <= limit:
        return ", ".join(items)
    rest = len(items) - limit
    return f"{', '.join(items[:limit])}, … and {rest:,} more {what}{'' if rest == 1 else 's'}"
