"""The fast codec writes and reads what the standard library did: the same indented bytes,
the same values, the same one-line refusals; a pstats table read column by column is the
table read value by value."""

from __future__ import annotations

import json
import math
import random

import pytest
from tf20_fixture import tf20_predict_stats

from tfdiag.records.jsontext import indented_json
from tfdiag.records.pstats_table import _canonical, checked
from tfdiag.records.reading import parse_json
from tfdiag.records.stats import ProfileStats

DOCS = [
    {},
    [],
    {"a": [], "b": {}, "c": [1, 2.5, -0.0, 1e-300, 1.5e308], "é": '\u2028\x00"\\'},
    [[[[]]], {"x": None, "y": True, "z": False}],
    {"n": 10**30, "s": "\U0001f600 tab\t"},
]


@pytest.mark.parametrize("doc", DOCS)
def test_indented_json_is_json_dumps_indent_one(doc: object) -> None:
    assert indented_json(doc) == json.dumps(doc, indent=1, allow_nan=False)
    assert parse_json(indented_json(doc).encode()) == doc


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_indented_json_refuses_nan_and_infinity(bad: float) -> None:
    with pytest.raises(ValueError):
        indented_json({"x": [bad]})


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (b'{"x": NaN}', "NaN is not a JSON number"),
        (b'{"x": -Infinity}', "Infinity is not a JSON number"),
        (b'{"x": 1e999}', "does not fit a float"),
        (b"[" * 100_000 + b"]" * 100_000, "recursion"),
        (b'{"x": 1' + b"0" * 5000 + b"}", "digits"),
    ],
)
def test_what_msgspec_refuses_is_refused_with_the_standard_librarys_words(
    text: bytes, fragment: str
) -> None:
    with pytest.raises((ValueError, RecursionError), match=fragment):
        parse_json(text)


def test_a_lone_surrogate_reaches_the_field_checks() -> None:
    assert parse_json(b'["\\udc80"]') == ["\udc80"]  # the record's text check refuses it


def test_a_canonical_table_reads_as_the_value_by_value_reader_reads_it() -> None:
    rng = random.Random(3)
    raw = tf20_predict_stats().to_pstats()
    keys = list(raw)
    for n in range(300):  # callers outside the table are dropped by both readers
        key = (f"/x/m{n}.py", n, f"f{n}")
        callers = {rng.choice(keys): (1, 1, 0.5, 1.0), ("gone", 1, "g"): (2, 2, 0.1, 0.1)}
        raw[key] = (2, 3, 0.25, 0.75, callers)
        keys.append(key)
    fast = _canonical(raw)
    assert fast is not None
    assert fast == checked(raw)
    assert ProfileStats.from_pstats(raw).functions == fast


@pytest.mark.parametrize(
    "odd",
    [
        (1, 1, -0.5, 0.1, {}),  # a hair below zero: clamped by the checked reader
        (1, 1, 1, 0.1, {}),  # an int time: converted
        (True, 1, 0.1, 0.1, {}),
        (1, 1, math.nan, 0.1, {}),
        (1, 1, 0.1, 0.1, {("a", 1, "b"): 3}),  # the old `profile` module's counts
    ],
)
def test_anything_not_canonical_goes_to_the_checked_reader(odd: tuple[object, ...]) -> None:
    raw = {("a", 1, "b"): (1, 1, 0.1, 0.1, {}), ("c", 2, "d"): odd}
    assert _canonical(raw) is None


def test_a_table_whose_callers_are_all_in_it_reads_as_the_checked_reader_reads_it() -> None:
    rng = random.Random(4)
    raw = tf20_predict_stats().to_pstats()
    keys = list(raw)
    for n in range(300):  # every caller in the table: each edge built in one pass
        key = (f"/x/m{n}.py", n, f"f{n}")
        raw[key] = (2, 3, 0.25, 0.75, {rng.choice(keys): (1, 1, 0.5, 1.0) for _ in range(3)})
        keys.append(key)
    fast = _canonical(raw)
    assert fast is not None
    assert fast == checked(raw)


TABLE = [("/x/é.py", 1, "f", 2, 2, 1e-05, 2.5e-05, ((0, 1, 1, 1e-05, 2e-05),))] * 3


@pytest.mark.parametrize(
    "table",
    [
        TABLE,  # text outside ASCII: written by the standard library, escaped
        [(r[0].replace("é", "e"), *r[1:]) for r in TABLE],  # msgspec's
        [(1, 10**30)],  # a number msgspec cannot hold: the standard library's
    ],
)
def test_a_table_written_apart_is_the_same_json_and_ascii(table: list[tuple[object, ...]]) -> None:
    doc = {"a": [1.5, "é"], "profile": {"functions": table}, "z": None}
    text = indented_json(doc, tables=("profile",))
    assert text.isascii()
    assert json.loads(text) == json.loads(json.dumps(doc))
    assert text.startswith('{\n "a": [\n  1.5,')  # the same layout


def test_a_big_reports_json_writes_its_tables_apart_and_refuses_a_nan_in_them() -> None:
    from dataclasses import replace

    from tfdiag.records.function_stat import FunctionStat
    from tfdiag.render.json import FAST_TABLE_ROWS, report_json_text, report_to_json
    from tfdiag.results.load import report_from_stats

    rows = tuple(
        FunctionStat(f"/site-packages/p/m{i % 50}.py", i, f"f{i}", 3, 3, 1e-06 * i, 2e-06 * i)
        for i in range(FAST_TABLE_ROWS)
    )
    report = report_from_stats(ProfileStats(rows), name="x.prof", iterations=3)
    text = report_json_text(report.diagnosis)
    assert json.loads(text) == json.loads(json.dumps(report_to_json(report.diagnosis)))
    assert "1e-6," in text and "1e-06" not in text  # msgspec's spelling: written apart
    bad = replace(rows[5], self_s=math.nan)
    nan = replace(report, profile=ProfileStats((*rows[:5], bad, *rows[6:])))
    with pytest.raises(ValueError):
        report_json_text(nan.diagnosis)
