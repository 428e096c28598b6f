"""``tfdiag run``'s TF-profiler block under calls from two threads (no TensorFlow: the
profiler session is a fake)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

import tfdiag.capture.trace_block as tb
from tfdiag.script.probes import ScriptProbes


class _FakeTrace:
    read_calls = 0

    @classmethod
    def create(cls) -> _FakeTrace:
        return cls()

    def begin(self) -> None:
        pass

    def step(self, i: int) -> Any:
        return contextlib.nullcontext()

    def stop(self, clock: Any) -> float:
        return 0.0

    def abort(self) -> None:
        pass

    def cleanup(self) -> None:
        pass

    def read(self, traced_s: Any, export_s: float) -> tuple[str, tuple[()]]:
        _FakeTrace.read_calls += 1
        return "profile", ()


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> ScriptProbes:
    monkeypatch.setattr(tb, "_create", _FakeTrace.create)
    _FakeTrace.read_calls = 0
    return ScriptProbes(iterations=10, tf_profiler=True)


def test_a_call_from_another_thread_during_a_traced_call_drops_the_trace(
    probes: ScriptProbes,
) -> None:
    """The TF profiler is process-wide: a call another thread made while a site's call was
    traced put its ops in the trace, which was then divided by the calls marked traced
    ('the model's ops take 13.2 ms of 0.7 ms per iteration', on one site called from two
    threads). Such a trace cannot be split by call: it is dropped, with a note."""
    site = probes.new_site()
    probes.entering(site)  # thread A
    assert probes.plain(site)  # A's call is traced
    probes.entering(site)  # thread B enters the same site meanwhile
    assert not probes.plain(site)
    probes.ended(site, 0.001, False)  # B
    probes.ended(site, 0.001, True)  # A
    profile, _ = probes.tf_record(site, wanted=True)
    assert profile is None and _FakeTrace.read_calls == 0
    assert site.block is not None and any("thread" in n for n in site.block.notes)


def test_no_trace_starts_while_another_threads_call_runs(probes: ScriptProbes) -> None:
    site, other = probes.new_site(), probes.new_site()
    probes.entering(other)  # another thread's call in flight, not traced
    probes.entering(site)
    assert not probes.plain(site)
    probes.ended(site, 0.001, False)
    probes.ended(other, 0.001, False)
    probes.entering(site)  # alone now: traced
    assert probes.plain(site)
    probes.ended(site, 0.001, True)
    profile, _ = probes.tf_record(site, wanted=True)
    assert profile == "profile"
