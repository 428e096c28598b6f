"""The capture path on a fake clock: exact per-iteration times, per-function times and shares.

As in pyinstrument's tests, time moves only when the fake program says so
(``clock.advance``), and every probe reads the same injected clock — the profiled and
unprofiled passes, cProfile itself, the sampler, the Keras callback and ``tfdiag run``'s
recorder — so the report's numbers are known to the last bit. The step sizes are powers
of two, so the sums are exact in floating point.
"""

from __future__ import annotations

import contextlib
import textwrap
from pathlib import Path

import pytest
from fake_keras import FakeModel

from tfdiag.capture import sampling
from tfdiag.capture.runner import profile_call
from tfdiag.capture.sampling import ThreadSampler
from tfdiag.keras import ProfileCallback
from tfdiag.records.catalog import Category
from tfdiag.records.errors import ProbeError
from tfdiag.script import instrument
from tfdiag.script.instrument import run_script

BUILD_S = 0.25  # 2**-2, once
WORK_S = 2.0**-7  # twice per call
OWN_S = 2.0**-8  # the step's own time, per call
CALL_S = 2 * WORK_S + OWN_S


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class Program:
    """A step that builds once, then works twice per call, on a fake clock."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.built = False

    def build(self) -> None:
        self.clock.advance(BUILD_S)

    def work(self) -> None:
        self.clock.advance(WORK_S)

    def step(self) -> None:
        if not self.built:
            self.build()
            self.built = True
        self.work()
        self.work()
        self.clock.advance(OWN_S)


def _fn(report, name):  # type: ignore[no-untyped-def]
    return next(f for f in report.profile.functions if f.name == name)


def test_profile_times_every_pass_and_function_exactly() -> None:
    clock = FakeClock()
    program = Program(clock)
    report = profile_call(program.step, iterations=6, clock=clock, tf_profiler=False)
    t = report.timing
    assert t.first_call_s == BUILD_S + CALL_S
    assert t.profiled_iteration_s == (CALL_S,) * 3  # half of the 6 ran under cProfile
    assert t.iteration_s == (CALL_S,) * 6  # the timed pass, on the same clock
    assert t.median_s == CALL_S and t.profiler_slowdown == 1.0

    work, step, build = (
        _fn(report, "Program.work"),
        _fn(report, "Program.step"),
        _fn(report, "Program.build"),
    )
    # The clock moves inside FakeClock.advance, so that is where self time lands; the
    # callers' cumulative times hold it exactly.
    assert (work.calls, work.cum_s) == (8, 8 * WORK_S)  # cold call + 3, twice each
    assert (step.calls, step.cum_s) == (4, 4 * CALL_S + BUILD_S)
    assert (build.calls, build.cum_s) == (1, BUILD_S)
    advance = _fn(report, "FakeClock.advance")
    assert (advance.calls, advance.self_s) == (1 + 4 * 3, BUILD_S + 4 * CALL_S)

    a = report.analysis
    assert a.exact_steady and a.steady_s == 3 * CALL_S
    assert a.first_call_s == BUILD_S + CALL_S
    assert a.steady_share(Category.USER_CODE) == 1.0
    steady_work = next(f for f in a.steady.functions if f.name == "Program.work")
    assert steady_work.cum_s / a.steady_s == 2 * WORK_S / CALL_S == 0.8


def test_findings_quote_the_exact_figures() -> None:
    clock = FakeClock()
    report = profile_call(Program(clock).step, iterations=6, clock=clock, tf_profiler=False)
    (finding,) = report.findings
    assert finding.id == "build-dominated"
    total = BUILD_S + 4 * CALL_S
    assert finding.impact == round(BUILD_S / total, 4)
    assert finding.evidence == (
        f"first call {BUILD_S + CALL_S:.3f} s vs {CALL_S:.4f} s per later call "
        f"({(BUILD_S + CALL_S) / CALL_S:.0f}×)",
        f"one-time cost (cold call minus one steady iteration): {BUILD_S:.3f} s, "
        f"{100 * BUILD_S / total:.0f} % of profiled time",
    )


def test_a_slower_iteration_shows_in_the_timeline_at_its_place() -> None:
    clock = FakeClock()
    calls = {"n": 0}

    def step() -> None:
        calls["n"] += 1
        clock.advance(2.0**-6 if calls["n"] == 1 + 3 + 3 else 2.0**-8)  # 3rd timed call

    report = profile_call(step, iterations=8, clock=clock, tf_profiler=False)
    assert report.timing.profiled_calls == 1 + 3  # max(3, ⌈8/4⌉) profiled
    assert report.timing.iteration_s == (2.0**-8,) * 2 + (2.0**-6,) + (2.0**-8,) * 5


def drive(cb: ProfileCallback, model: object, clock: FakeClock, batches: int) -> None:
    """What Keras' fit does with a callback; each step takes 2**-6 s, each hook 2**-9 s."""
    cb.set_model(model)
    cb.set_params({"epochs": 1, "steps": batches})
    cb.on_train_begin()
    for b in range(batches):
        cb.on_train_batch_begin(b)
        model.train_function()  # type: ignore[attr-defined]
        clock.advance(2.0**-9)  # the rest of the batch before on_train_batch_end
        cb.on_train_batch_end(b)
    cb.on_train_end()


def test_the_keras_callback_times_batches_on_the_clock_it_is_given() -> None:
    clock = FakeClock()

    class Model:
        def __init__(self) -> None:
            self.train_function = self.step

        def step(self) -> None:
            clock.advance(2.0**-6)

    cb = ProfileCallback(batches=(2, 5), tf_profiler=False, clock=clock)
    drive(cb, Model(), clock, 8)
    report = cb.report
    assert report is not None
    batch_s = 2.0**-6 + 2.0**-9
    assert report.timing.first_call_s == batch_s
    assert report.timing.profiled_iteration_s == (batch_s,) * 3
    assert report.timing.iteration_s == (batch_s,) * 4  # batch 1 and batches 6–8
    step = next(f for f in report.profile.functions if f.name.endswith("Model.step"))
    assert (step.calls, step.cum_s) == (4, 4 * 2.0**-6)


def test_the_script_recorder_times_each_site_on_the_clock_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()

    class TimedModel(FakeModel):
        def predict(self, x: object, work: int = 0) -> int:
            clock.advance(2.0**-5)
            return 0

    monkeypatch.setattr(instrument, "model_classes", lambda: [TimedModel])
    script = tmp_path / "loop.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            model = sys.modules["__tfdiag_test_model__"]()
            for _ in range(6):
                model.predict(1)
            """
        )
    )
    import sys

    monkeypatch.setitem(sys.modules, "__tfdiag_test_model__", TimedModel)  # type: ignore[arg-type]
    result = run_script(script, iterations=3, tf_profiler=False, clock=clock)
    (site,) = result.sites
    assert site.calls == 6 and site.total_s == 6 * 2.0**-5
    assert site.call_s == (2.0**-5,) * 6
    assert result.wall_s == 6 * 2.0**-5  # the recorder's own bookkeeping took no fake time


def test_the_sampler_gives_each_sample_the_time_since_the_last() -> None:
    clock = FakeClock()
    sampler = ThreadSampler(clock=clock)

    def inner() -> None:
        clock.advance(2.0**-4)
        sampler.sample()  # the sampling thread would read the stack here...
        clock.advance(2.0**-3)
        sampler.sample()  # ...and here

    sampling._calls(inner, (), {}, 1, [], clock)
    ((codes, (samples, seconds)),) = sampler.stacks.items()
    assert (samples, seconds) == (2, 2.0**-4 + 2.0**-3)
    assert [c.co_name for c in codes][:2] == ["inner", "sample"]  # root → leaf, below the loop


class _FailingTrace:
    """A TF profiler that traces its block (slowing each call 2**-5 s) and then fails to
    stop or to be read, as a busy machine or a broken xprof can make it."""

    SLOW_S = 2.0**-5

    def __init__(self, clock: FakeClock, fails_at: str) -> None:
        self.clock, self.fails_at, self.running = clock, fails_at, False

    def begin(self) -> None:
        self.running = True

    @contextlib.contextmanager
    def step(self, i: int):  # type: ignore[no-untyped-def]
        self.clock.advance(self.SLOW_S)  # inside the call's timing, as the profiler's cost
        yield

    def stop(self, clock: FakeClock) -> float:
        self.running = False
        if self.fails_at == "stop":
            raise ProbeError("the TF profiler could not write its trace (disk full)")
        return 0.0

    def read(self, times, export_s):  # type: ignore[no-untyped-def]
        raise ProbeError("xprof could not read the trace (overview_page is empty)")

    def abort(self) -> None:
        self.running = False

    def cleanup(self) -> None:
        pass


@pytest.mark.parametrize("fails_at", ["stop", "read"])
def test_traced_calls_stay_apart_when_the_trace_is_lost(monkeypatch, fails_at: str) -> None:
    from tfdiag.capture import trace_block

    clock = FakeClock()
    program = Program(clock)
    monkeypatch.setattr(trace_block, "_create", lambda: _FailingTrace(clock, fails_at))
    report = profile_call(program.step, iterations=6, clock=clock, tf_profiler=True)
    t = report.timing
    # 3 calls ran under the (failed) TF profiler, then the 6 plain ones asked for
    assert t.traced == 3 and len(t.iteration_s) == 3 + 6
    assert t.plain_s == (CALL_S,) * 6 and t.median_s == CALL_S
    assert t.iteration_s[:3] == (CALL_S + _FailingTrace.SLOW_S,) * 3
    assert report.probes is None  # no trace was read: no op table claimed
    assert any("TF profiler probe:" in n for n in report.notes)
