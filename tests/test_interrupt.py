"""Ctrl-C during profile(): profilers detached, the iterations so far offered, marked partial."""

from __future__ import annotations

import sys
import threading
import time
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
        tfdiag.profile(_interrupt_on(1 + 3 + 3), iterations=4, sampling=True, tf_profiler=False)
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


# -- a Ctrl-C as a probe starts (#20.11) ----------------------------------------------------


def _samplers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "tfdiag-sampler" and t.is_alive()]


def _settled(threads: list[threading.Thread]) -> list[threading.Thread]:
    for t in threads:
        t.join(timeout=2)
    return [t for t in threads if t.is_alive()]


class _InterruptedAsItStarts(threading.Thread):
    """A thread whose start() is hit by Ctrl-C once the thread runs, before start() returns
    (where ``Thread.start`` waits for it): ~1 in 200 bursts of Ctrl-C landed there."""

    def start(self) -> None:
        super().start()
        raise KeyboardInterrupt


@pytest.mark.parametrize("where", ["sampled_pass", "observe"])
def test_a_ctrl_c_as_the_sampler_starts_leaves_no_sampler_running(
    monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    from tfdiag.capture import observe, sampling

    before = _samplers()
    monkeypatch.setattr(sampling.threading, "Thread", _InterruptedAsItStarts)
    with pytest.raises(KeyboardInterrupt):
        if where == "sampled_pass":
            sampling.sampled_pass(len, ([1],), {}, 3)
        else:
            observe.observe(
                len, ([1],), {}, 3, sampling=True, tf_profiler=False, clock=time.perf_counter
            )
    monkeypatch.undo()
    assert _settled([t for t in _samplers() if t not in before]) == []


def test_a_ctrl_c_as_the_tf_profiler_starts_stops_the_sampler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tfdiag.capture import observe, tfprofiler

    def interrupted() -> None:
        raise KeyboardInterrupt

    before = _samplers()
    monkeypatch.setattr(tfprofiler, "import_xprof", interrupted)
    with pytest.raises(KeyboardInterrupt):
        observe.observe(
            len, ([1],), {}, 3, sampling=True, tf_profiler=True, clock=time.perf_counter
        )
    assert _settled([t for t in _samplers() if t not in before]) == []


@pytest.mark.tf
def test_a_ctrl_c_as_the_tf_profiler_starts_leaves_no_session_or_trace_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tempfile

    import tensorflow as tf

    from tfdiag.capture import observe

    real_start = tf.profiler.experimental.start

    def started_then_interrupted(*args: object, **kwargs: object) -> None:
        real_start(*args, **kwargs)
        raise KeyboardInterrupt  # the Ctrl-C lands as start() returns

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(tf.profiler.experimental, "start", started_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        observe.observe(
            len, ([1],), {}, 3, sampling=False, tf_profiler=True, clock=time.perf_counter
        )
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []  # no trace folder left
    tf.profiler.experimental.start(str(tmp_path / "mine"))  # no session left running
    tf.profiler.experimental.stop(save=False)


PRESS_LATE = """
import contextlib, json, os, signal, sys
sys.path.insert(0, ROOT)
import tfdiag
import tfdiag.render.progress as progress

@contextlib.contextmanager
def bar(description, *, enabled=True, console=None):
    try:
        yield None
    finally:  # a press of the burst lands as tfdiag closes its progress bar
        os.kill(os.getpid(), signal.SIGINT)

progress.progress_bar = bar
seen = {"n": 0}

def step():
    seen["n"] += 1
    if seen["n"] == STOP_AT:
        os.kill(os.getpid(), signal.SIGINT)  # the first press, in the user's step
    return sum(range(200))

try:
    tfdiag.profile(step, iterations=6, tf_profiler=False)
    print(json.dumps("returned"))
except tfdiag.Interrupted as exc:
    r = exc.report
    print(json.dumps([str(exc).split(":")[0], r is not None and r.partial]))
"""


@pytest.mark.parametrize(
    ("stop_at", "expected"),
    [(4, ["interrupted", True]), (0, ["interrupted as the run finished", False])],
)
def test_a_press_as_profile_returns_is_its_interrupted_not_a_bare_one(
    stop_at: int, expected: list[object]
) -> None:
    """The handler tfdiag puts in place for the run is restored last, after its progress bar
    closed: a press there (the rest of a burst, or the first one, late) gives Interrupted
    with the report, never a KeyboardInterrupt out of tfdiag's frames that loses it."""
    import json
    import signal
    import subprocess

    from conftest import ROOT

    code = PRESS_LATE.replace("ROOT", repr(str(ROOT))).replace("STOP_AT", str(stop_at))
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == expected


def test_a_press_as_the_users_handler_comes_back_keeps_the_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A press that lands inside the call that puts the user's handler back is raised by that
    handler there, in tfdiag's frame (1 burst in ~3,000 lost its report so): it is caught
    and given as Interrupted with the complete report, and the user's handler is back."""
    import signal

    from tfdiag.capture import ctrl_c

    real = signal.signal

    def put_back_then_pressed(signum: int, handler: object) -> object:
        before = real(signum, handler)  # type: ignore[arg-type]
        if handler is signal.default_int_handler:
            raise KeyboardInterrupt  # as the handler just put back raises a press
        return before

    # Python's own handler, as in a terminal (a CI runner's background job inherits SIGINT
    # ignored, and tfdiag then installs nothing)
    outer = real(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(ctrl_c.signal, "signal", put_back_then_pressed)
        with pytest.raises(tfdiag.Interrupted) as info:
            tfdiag.profile(lambda: sum(range(200)), iterations=4, tf_profiler=False)
        monkeypatch.undo()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        real(signal.SIGINT, outer)
    assert str(info.value).startswith("interrupted as the run finished")
    assert info.value.report is not None and not info.value.report.partial
