"""The views show a bounded part of long lists and say how much they left out: a report of
a million valid notes, a job of 1,000 workers (each carrying the whole cluster). Counted on
what is rendered, not timed."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from synth import full_set_report
from test_merge import worker

import tfdiag
from tfdiag.render.caps import (
    MAX_LISTED,
    MAX_NOTE_CHARS,
    MAX_NOTES_SHOWN,
    MAX_WORKERS_SHOWN,
    clip,
    listed,
    shown_notes,
)


def test_a_long_list_of_notes_shows_the_first_and_counts_the_rest() -> None:
    notes = [f"note {i}" for i in range(1000)]
    shown = shown_notes(notes)
    assert shown[:MAX_NOTES_SHOWN] == notes[:MAX_NOTES_SHOWN]
    assert len(shown) == MAX_NOTES_SHOWN + 1
    assert f"{1000 - MAX_NOTES_SHOWN:,} more notes not shown" in shown[-1]
    assert shown_notes(notes[:3]) == notes[:3]  # a short list is shown whole
    long = "x" * (MAX_NOTE_CHARS * 10)
    assert clip(long).startswith("x" * MAX_NOTE_CHARS)
    assert len(clip(long)) < MAX_NOTE_CHARS + 60
    assert f"{MAX_NOTE_CHARS * 9:,} more characters" in clip(long)
    assert listed([str(i) for i in range(5)], "host") == "0, 1, 2, 3, 4"
    assert listed([str(i) for i in range(1000)], "host").endswith(
        f"… and {1000 - MAX_LISTED} more hosts"
    )


def test_a_report_of_many_valid_notes_renders_a_bounded_view() -> None:
    report = replace(full_set_report(), notes=tuple(f"n{i:06d} " + "y" * 5000 for i in range(5000)))
    text = report.render("text", width=100)
    assert isinstance(text, str)
    assert text.count("note: n0") == MAX_NOTES_SHOWN
    assert "n000019" in text and "n000020" not in text
    assert f"{5000 - MAX_NOTES_SHOWN:,} more notes not shown" in text
    assert len(text) < 100_000  # 20 notes of ≤ 2,000 characters, not 25 MB
    html = report.render("html")
    assert isinstance(html, str) and html.count("<li>n0") == MAX_NOTES_SHOWN
    doc = json.loads(report.render("json"))
    assert len(doc["notes"]) == 5000  # the JSON keeps them all


def test_a_merge_of_many_workers_renders_a_bounded_view(tmp_path: Path) -> None:
    n = 300
    cluster = (("worker", tuple(f"host{i}:2222" for i in range(n))),)
    reports = [worker(i, cycle_ms=10 + (i % 3), fn_ms=8, cluster=cluster) for i in range(n)]
    job = tfdiag.merge(reports)
    text = job.render("text", width=100)
    assert isinstance(text, str)
    assert "host9:2222" in text and "host10:2222" not in text
    assert f"and {n - MAX_LISTED} more hosts" in text
    rows = [int(m[1]) for line in text.splitlines() if (m := re.search(r"(\d+)\s+worker:", line))]
    assert rows == list(range(MAX_WORKERS_SHOWN)), rows
    assert f"{n - MAX_WORKERS_SHOWN} more workers not shown" in text
    assert len(text.splitlines()) < 4 * MAX_WORKERS_SHOWN
    assert len(json.loads(job.render("json"))["workers"]) == n
