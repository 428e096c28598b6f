"""Sampled stacks → culprit categories (synthetic stacks), the pyinstrument session, the sampler."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from synth import SITE, Node, make_report

from tfdiag.analysis.sampled import sampled_breakdown, sampled_shares, stack_category
from tfdiag.capture.sampling import sampled_pass
from tfdiag.records.catalog import Catalog, Category, Rule, default_catalog
from tfdiag.records.probes import FrameKey, Probes, SampledStack, SamplingRecord
from tfdiag.render.artefacts import session_json

DATA = SITE + "lib/data.py"
TRACE = SITE + "lib/trace.py"
WRAP = SITE + "lib/wrap.py"
OPS = SITE + "lib/ops.py"
PLAIN = SITE + "lib/plain.py"
USER = "/home/me/train.py"

CATALOG = Catalog(
    (
        Rule("lib/wrap.py", "*", Category.WRAPPER, "decorator"),
        Rule("lib/data.py", "*", Category.INPUT_PIPELINE, "builds a pipeline"),
        Rule("lib/trace.py", "*", Category.GRAPH_BUILDING, "traces"),
        Rule("lib/ops.py", "execute", Category.OP_EXECUTION, "runs an op", weak=True),
    )
)


def _category(*frames: tuple[str, str]) -> Category:
    keys = [(f, 1, n) for f, n in frames]
    return stack_category(keys, [CATALOG.match(f, n) for f, _, n in keys])


def test_a_culprit_leaf_keeps_its_time() -> None:
    assert _category((USER, "step"), (DATA, "make")) is Category.INPUT_PIPELINE


def test_a_plain_leaf_goes_to_the_nearest_culprit_above_through_wrappers() -> None:
    stack = ((USER, "step"), (DATA, "make"), (TRACE, "trace"), (WRAP, "w"), (PLAIN, "helper"))
    assert _category(*stack) is Category.GRAPH_BUILDING


def test_a_weak_leaf_takes_the_culprit_above_it_looking_through_wrappers() -> None:
    stack = ((USER, "step"), (DATA, "make"), (WRAP, "w"), (WRAP, "w2"), (OPS, "execute"))
    assert _category(*stack) is Category.INPUT_PIPELINE


def test_a_weak_leaf_takes_the_nearest_culprit_on_its_path_through_plain_frames() -> None:
    # As in the cProfile attribution: an op run by a helper of a tf.data builder is the
    # builder's (input pipeline), not op execution.
    stack = ((USER, "step"), (DATA, "make"), (PLAIN, "helper"), (OPS, "execute"))
    assert _category(*stack) is Category.INPUT_PIPELINE


def test_a_weak_leaf_under_no_culprit_keeps_its_own_category() -> None:
    stack = ((USER, "step"), (PLAIN, "helper"), (OPS, "execute"))
    assert _category(*stack) is Category.OP_EXECUTION


def test_user_code_keeps_its_own_time_and_framework_under_it_is_other() -> None:
    assert _category((USER, "step"), (USER, "loss")) is Category.USER_CODE
    assert _category((DATA, "make"), (USER, "callback"), (PLAIN, "helper")) is Category.OTHER
    assert _category() is Category.OTHER
    assert _category((WRAP, "w"), (PLAIN, "helper")) is Category.OTHER


def _record(stacks: list[tuple[tuple[FrameKey, ...], int, float]]) -> SamplingRecord:
    index: dict[FrameKey, int] = {}
    out = []
    for frames, n, seconds in stacks:
        out.append(SampledStack(tuple(index.setdefault(f, len(index)) for f in frames), n, seconds))
    return SamplingRecord(0.005, (0.1, 0.1), tuple(index), tuple(out), outside_s=0.001)


RECORD = _record(
    [
        (((USER, 1, "step"), (DATA, 1, "make")), 6, 0.03),
        (((USER, 1, "step"), (DATA, 1, "make"), (TRACE, 1, "trace"), (PLAIN, 1, "h")), 3, 0.015),
        (((USER, 1, "step"), (USER, 9, "loss")), 1, 0.005),
    ]
)


def test_breakdown_has_no_overlap_and_sums_to_sampled_time() -> None:
    seconds = sampled_breakdown(RECORD, CATALOG)
    assert sum(seconds.values()) == pytest.approx(RECORD.sampled_s)
    assert seconds == pytest.approx(
        {Category.INPUT_PIPELINE: 0.03, Category.GRAPH_BUILDING: 0.015, Category.USER_CODE: 0.005}
    )
    assert RECORD.samples == 10


def test_shares_use_the_reports_rules_first() -> None:
    report = make_report([Node(USER, "step", 0.1)], iterations=3)
    report = replace(report, probes=Probes(sampling=RECORD))
    assert sampled_shares(report) is not None
    # the default catalog knows nothing of lib/: all framework time is "other"
    shares = sampled_shares(report)
    assert shares == pytest.approx({Category.OTHER: 0.9, Category.USER_CODE: 0.1})
    mine = Rule("lib/data.py", "make", Category.INPUT_PIPELINE, "mine")
    shares = sampled_shares(replace(report, rules=(mine,)))
    assert shares is not None and shares[Category.INPUT_PIPELINE] == pytest.approx(0.9)
    assert sampled_shares(replace(report, probes=None)) is None


def test_the_session_renders_as_html_and_speedscope() -> None:
    from pyinstrument.renderers import HTMLRenderer, SpeedscopeRenderer
    from pyinstrument.session import Session

    doc = session_json(RECORD, "tfdiag sampling of step")
    session = Session.from_json(json.loads(json.dumps(doc)))
    assert session.sample_count == RECORD.samples
    assert session.sys_prefixes == [SITE]
    speedscope = json.loads(SpeedscopeRenderer().render(session))
    assert speedscope["$schema"].endswith("file-format-schema.json")
    names = {f["name"] for f in speedscope["shared"]["frames"]}
    assert {"step", "make", "trace"} <= names
    page = HTMLRenderer().render(session)
    parser = HTMLParser()
    parser.feed(page)
    assert page.lstrip().lower().startswith("<!doctype html>") and "<script" in page


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_the_sampler_records_the_call_below_its_own_loop() -> None:
    record = sampled_pass(_busy, (0.03,), {}, 4, interval_s=0.002)
    assert len(record.iteration_s) == 4
    assert record.samples > 0
    names = {record.frames[i][2] for s in record.stacks for i in s.frames}
    assert "_busy" in names
    assert not any(n.endswith("_calls") or n == "sampled_pass" for n in names)
    assert sampled_breakdown(record, default_catalog()).get(Category.USER_CODE, 0) > 0


def test_the_sampler_stops_when_the_call_raises() -> None:
    calls = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyError("boom")

    with pytest.raises(KeyError):
        sampled_pass(flaky, (), {}, 5)
    assert len(calls) == 2
    assert not any(t.name == "tfdiag-sampler" for t in threading.enumerate())


def test_pyinstruments_own_views_name_the_libraries_and_show_the_user_frames() -> None:
    # #12: the session had an empty sys_path and no CPU time, so pyinstrument's console
    # view hid every frame under an empty group name and showed "CPU time: 0.000".
    from pyinstrument.renderers import ConsoleRenderer
    from pyinstrument.session import Session

    keras = "/venv/lib/python3.11/site-packages/keras/src/trainer.py"
    record = SamplingRecord(
        interval_s=0.001,
        iteration_s=(0.1,),
        frames=(
            ("/tmp/job/train.py", 3, "main"),
            *((keras, 10 * i, f"layer{i}") for i in range(1, 7)),
            ("/tmp/job/model.py", 5, "call"),
        ),
        stacks=(SampledStack((0, 1, 2, 3, 4, 5, 6, 7), 100, 0.1),),
        cpu_s=0.25,
    )
    session = Session.from_json(json.loads(json.dumps(session_json(record, "run"))))
    text = ConsoleRenderer(unicode=True, color=False, show_all=False).render(session)
    assert "CPU time: 0.250" in text
    assert "main  train.py:3" in text and "call  model.py:5" in text  # shown, shortened
    assert "frames hidden]  keras" in text  # the hidden library frames are named


def test_the_sampler_records_the_processes_cpu_time() -> None:
    def spin() -> None:
        end = time.process_time() + 0.02
        while time.process_time() < end:
            pass

    record = sampled_pass(spin, (), {}, 2, interval_s=0.001)
    assert record.cpu_s is not None and record.cpu_s >= 0.04 * 0.9
