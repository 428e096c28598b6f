"""Progress bars on long work (#12): a transient rich bar on stderr where someone watches
(a terminal, a notebook), nothing elsewhere, nothing when asked for none — and never inside
a timed call: on the fake clock, an update that costs a whole second changes no timing."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from rich.console import Console
from test_fake_clock import BUILD_S, CALL_S, FakeClock, Program

import tfdiag
from tfdiag.capture.runner import profile_call
from tfdiag.render import progress


def _fake_stderr(monkeypatch: pytest.MonkeyPatch, *, terminal: bool) -> io.StringIO:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=terminal, force_jupyter=False, width=120)
    monkeypatch.setattr(progress, "_console", lambda: console)
    return buf


def _busy() -> int:
    return sum(range(200))


def test_profile_on_a_terminal_shows_a_bar_with_its_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(progress.ENV, raising=False)
    monkeypatch.setattr(progress, "REFRESH_S", 0.0)  # draw every step
    buf = _fake_stderr(monkeypatch, terminal=True)
    tfdiag.profile(_busy, iterations=4, tf_profiler=False)
    shown = buf.getvalue()
    assert "tfdiag.profile" in shown
    for label in ("cold call", "profiled 1/3", "timed 4/4", "8/8"):  # 1 + 3 + 4 steps
        assert label in shown, shown


@pytest.mark.parametrize(
    ("terminal", "env", "flag"),
    [(False, None, True), (True, "0", True), (True, "off", True), (True, None, False)],
)
def test_no_bar_off_a_terminal_or_when_turned_off(
    monkeypatch: pytest.MonkeyPatch, terminal: bool, env: str | None, flag: bool
) -> None:
    if env is None:
        monkeypatch.delenv(progress.ENV, raising=False)
    else:
        monkeypatch.setenv(progress.ENV, env)
    buf = _fake_stderr(monkeypatch, terminal=terminal)
    seen: list[Any] = []
    real = profile_call

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["on_step"])
        return real(*args, **kwargs)

    monkeypatch.setattr("tfdiag.frontends.api.profile_call", spy)
    tfdiag.profile(_busy, iterations=3, tf_profiler=False, progress=flag)
    assert buf.getvalue() == ""
    assert seen == [None]  # no callback at all: the passes skip the calls


def test_a_notebook_without_ipywidgets_gets_no_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(file=io.StringIO(), force_jupyter=True)
    monkeypatch.setattr(progress.importlib.util, "find_spec", lambda name: None)
    assert not progress.watched(console)
    monkeypatch.setattr(progress.importlib.util, "find_spec", lambda name: object())
    assert progress.watched(console)


def test_updates_fall_between_timed_calls_on_the_fake_clock() -> None:
    clock = FakeClock()
    steps: list[tuple[int, int, str]] = []

    def costly_update(done: int, total: int, label: str) -> None:
        steps.append((done, total, label))
        clock.advance(1.0)  # a second per update: inside any timing, it would show

    report = profile_call(
        Program(clock).step, iterations=6, clock=clock, on_step=costly_update, tf_profiler=False
    )
    t = report.timing
    assert t.first_call_s == BUILD_S + CALL_S
    assert t.profiled_iteration_s == (CALL_S,) * 3
    assert t.iteration_s == (CALL_S,) * 6
    step = next(f for f in report.profile.functions if f.name == "Program.step")
    assert step.cum_s == 4 * CALL_S + BUILD_S  # cProfile saw none of the updates either
    assert [s[0] for s in steps] == list(range(1, 11)) and {s[1] for s in steps} == {10}
    assert [s[2] for s in steps] == [
        "cold call",
        *(f"profiled {i}/3" for i in range(1, 4)),
        *(f"timed {i}/6" for i in range(1, 7)),
    ]


def test_sampled_updates_count_as_outside_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from tfdiag.capture import sampling

    clock = FakeClock()
    sampler = sampling.ThreadSampler(clock=clock)
    times: list[float] = []

    def update() -> None:
        clock.advance(0.5)
        sampler.sample()  # a sample taken while the bar updates

    sampling._calls(lambda: clock.advance(0.25), (), {}, 2, times, clock, after=update)
    assert times == [0.25, 0.25]
    assert sampler.stacks == {} and sampler.outside_s == 1.5


def test_the_bar_helper_yields_a_callback_only_where_it_draws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(progress.ENV, raising=False)
    buf = io.StringIO()
    with progress.progress_bar("bench", console=Console(file=buf, force_terminal=True)) as on:
        assert on is not None
        on(1, 2, "small · predict")
        on(2, 2, "small · fit")
    assert "bench" in buf.getvalue() and "small · fit" in buf.getvalue()
    with progress.progress_bar("bench", console=Console(file=io.StringIO())) as off:
        assert off is None


@pytest.mark.tf
def test_compare_on_a_terminal_shows_its_methods(
    monkeypatch: pytest.MonkeyPatch,
    tiny_model_factory: Callable[[str], Any],
    tiny_data: tuple[Any, Any],
) -> None:
    monkeypatch.delenv(progress.ENV, raising=False)
    monkeypatch.setattr(progress, "REFRESH_S", 0.0)  # draw every step
    buf = _fake_stderr(monkeypatch, terminal=True)
    x, _ = tiny_data
    tfdiag.compare(tiny_model_factory("keras3"), x, methods=["predict", "model(x)"], repeats=2)
    assert "tfdiag.compare" in buf.getvalue() and "model(x)" in buf.getvalue()
    quiet = _fake_stderr(monkeypatch, terminal=False)
    tfdiag.compare(tiny_model_factory("keras3"), x, methods=["predict"], repeats=2)
    assert quiet.getvalue() == ""


class _Stop(Exception):
    pass


def _demo_until_tensorflow(monkeypatch: pytest.MonkeyPatch, buf: io.StringIO) -> str:
    """``tfdiag demo`` up to its TensorFlow import: what stderr showed by then."""
    import tfdiag.capture.native_log as native_log
    from tfdiag.frontends.cli import build_parser

    seen = []

    def stop() -> None:
        seen.append(buf.getvalue())
        raise _Stop

    monkeypatch.setattr(native_log, "import_tensorflow", stop)
    args = build_parser().parse_args(["demo"])
    with pytest.raises(_Stop):
        args.func(args)
    return seen[0]


def test_demo_says_what_it_does_before_the_seconds_of_tensorflow_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 35: a terminal showed nothing for ~15 s (TensorFlow's import, the model's build)
    before the first bar; a pipe stays clean."""
    shown = _demo_until_tensorflow(monkeypatch, _fake_stderr(monkeypatch, terminal=True))
    assert shown.startswith("tfdiag demo: importing TensorFlow")
    assert "predict × 20" in shown and len(shown.splitlines()) == 1
    assert _demo_until_tensorflow(monkeypatch, _fake_stderr(monkeypatch, terminal=False)) == ""
    monkeypatch.setenv(progress.ENV, "0")
    assert _demo_until_tensorflow(monkeypatch, _fake_stderr(monkeypatch, terminal=True)) == ""
