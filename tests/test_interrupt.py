"""Ctrl-C during profile(): profilers detached, the iterations so far offered, marked partial."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

import tfdiag


def _interrupt_on(k: int):
    seen = {"n": 0}

    def step() -> int:
        seen["n"] += 1
        if seen["n"] == k:
            raise KeyboardInterrupt
        return sum(range(200))

    return step


def test_interrupt_in_the_cold_call_has_nothing_to_offer() -> None:
    with pytest.raises(tfdiag.Interrupted, match="first call") as info:
        tfdiag.profile(_interrupt_on(1), iterations=10)
    assert info.value.report is None
    assert isinstance(info.value, KeyboardInterrupt)  # an uncaught one still stops a script
    assert sys.getprofile() is None


def test_interrupt_in_the_profiled_pass_offers_a_partial_report(tmp_path: Path) -> None:
    with pytest.raises(tfdiag.Interrupted, match="after 3 of 5 profiled") as info:
        tfdiag.profile(_interrupt_on(5), iterations=20)  # cold + 3 done, the 4th interrupted
    report = info.value.report
    assert sys.getprofile() is None
    assert report.partial and report.timing.iterations == 3
    assert len(report.timing.profiled_iteration_s) == 3 and report.timing.iteration_s == ()
    assert "partial" in repr(report)
    json_path, _ = report.save(tmp_path / "partial")
    assert tfdiag.load_report(json_path).partial
    # The lock was released: the next profile() runs.
    assert not tfdiag.profile(len, [1], iterations=3).partial


def test_interrupt_in_the_timed_pass_keeps_its_times_and_stops_the_sampler() -> None:
    threads = threading.active_count()
    with pytest.raises(tfdiag.Interrupted, match="after 2 of 4 timed") as info:
        # cold + 3 profiled, then 2 timed
        tfdiag.profile(_interrupt_on(1 + 3 + 3), iterations=4, sampling=True)
    report = info.value.report
    assert report.partial and report.timing.iterations == 3
    assert len(report.timing.iteration_s) == 2
    assert report.probes is not None and report.probes.sampling is not None
    assert report.probes.sampling.iteration_s == report.timing.iteration_s
    assert sys.getprofile() is None and threading.active_count() == threads


def test_a_partial_report_says_its_classes_are_approximate() -> None:
    with pytest.raises(tfdiag.Interrupted) as info:
        tfdiag.profile(_interrupt_on(6), iterations=20)
    assert any("approximate" in n for n in info.value.report.notes)
