"""tfdiag.profile on plain Python callables: capture logic without TensorFlow."""

from __future__ import annotations

import sys

import pytest

import tfdiag
from tfdiag.analysis.classify import CostClass

_built = []


def _build_once() -> None:
    _built.append(sum(range(2000)))


def _per_call_work() -> int:
    return sum(range(300))


def step(x: int, *, scale: int = 1) -> int:
    if not _built:
        _build_once()
    return sum(_per_call_work() for _ in range(3)) * scale + x


def _row(report: tfdiag.Report, name: str) -> int:
    return next(i for i, f in enumerate(report.profile.functions) if f.name == name)


def test_counts_classes_and_exact_steady_state() -> None:
    _built.clear()
    report = tfdiag.profile(step, 1, iterations=6, scale=2)
    a = report.analysis
    work, build = _row(report, "_per_call_work"), _row(report, "_build_once")
    assert report.profile.functions[work].calls == 3 * 4  # cold call + 3 profiled, 3 times each
    assert a.classes[work].cost is CostClass.PER_ITERATION and a.classes[work].per_iter == 3
    assert a.classes[build].cost is CostClass.BUILD
    # The steady state excludes the cold call exactly: no build, 3 calls per iteration.
    assert a.steady.functions[build].calls == 0
    assert a.steady_calls_per_iteration(work) == 3
    assert dict(report.call.kwargs) == {"scale": "2"}
    assert report.call.args == ("1",)
    # Half of the 6 iterations ran under cProfile; all 6 were timed without it.
    assert len(report.timing.plain_s) == 6 and len(report.timing.profiled_iteration_s) == 3


def test_user_code_is_its_own_category() -> None:
    report = tfdiag.profile(step, 1, iterations=3)
    cats = report.analysis.attribution.by_category
    assert cats[tfdiag.Category.USER_CODE] > 0


def test_profile_inside_profile_is_refused_and_state_is_restored() -> None:
    def nested() -> None:
        tfdiag.profile(len, [1], iterations=3)

    with pytest.raises(tfdiag.ProfilerBusyError, match="already running"):
        tfdiag.profile(nested, iterations=3)
    assert sys.getprofile() is None
    assert tfdiag.profile(len, [1], iterations=3).timing.iterations == 3


def test_exception_on_iteration_k_propagates_unchanged() -> None:
    seen = {"n": 0}
    error = LookupError("boom on call 4")

    def flaky() -> None:
        seen["n"] += 1
        if seen["n"] == 4:
            raise error

    with pytest.raises(LookupError) as info:
        tfdiag.profile(flaky, iterations=5)
    assert info.value is error
    assert sys.getprofile() is None


def test_exception_in_the_unprofiled_pass_propagates_too() -> None:
    seen = {"n": 0}

    def flaky() -> None:
        seen["n"] += 1
        if seen["n"] == 6:  # cold + 3 profiled, then the 2nd timed call
            raise RuntimeError("late")

    with pytest.raises(RuntimeError, match="late"):
        tfdiag.profile(flaky, iterations=3)
    assert sys.getprofile() is None


def test_few_iterations_are_noted() -> None:
    report = tfdiag.profile(len, [1], iterations=2)
    assert any("cannot be told apart" in n for n in report.notes)


def test_a_profiler_attached_by_someone_else_is_never_replaced() -> None:
    """Under `python -m cProfile` or an IDE profiler, tfdiag refuses rather than detach it."""

    def outer(frame: object, event: str, arg: object) -> None:
        return None

    sys.setprofile(outer)
    try:
        with pytest.raises(tfdiag.ProfilerBusyError, match="another profiler is attached"):
            tfdiag.profile(len, [1], iterations=3)
        assert sys.getprofile() is outer
    finally:
        sys.setprofile(None)
    assert tfdiag.profile(len, [1], iterations=3).timing.iterations == 3  # the lock was freed


def test_a_generator_or_async_function_is_refused() -> None:
    def gen():  # type: ignore[no-untyped-def]
        yield sum(range(10))

    async def coro() -> None:
        return None

    for fn in (gen, coro):
        with pytest.raises(tfdiag.InputError, match="generator or async function"):
            tfdiag.profile(fn, iterations=3)
    assert sys.getprofile() is None
