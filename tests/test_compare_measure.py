"""Interleaved timing and the seeds' percent, on a fake clock: no TensorFlow, exact numbers."""

from __future__ import annotations

import pytest

from tfdiag.measure.timing import block_size, measure, one_line
from tfdiag.records.numbers import iqr, is_noisy, median, signed_percent


class FakeClock:
    """A clock that only moves when a fake method "runs"."""

    def __init__(self) -> None:
        self.t = 0.0
        self.log: list[str] = []

    def __call__(self) -> float:
        return self.t

    def method(self, name: str, costs: list[float] | float) -> tuple[str, object]:
        """A runner whose k-th call costs ``costs[k]`` (the last one repeats)."""
        calls = [0]

        def run(n: int) -> None:
            for _ in range(n):
                k = calls[0]
                cost = costs if isinstance(costs, float) else costs[min(k, len(costs) - 1)]
                self.t += cost
                calls[0] += 1
            self.log.append(name)

        return name, run


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (1.0, 2.0, 100.0),  # a twice as fast: +100 %
        (2.0, 1.0, -100.0),  # a twice as slow: −100 %
        (0.010, 0.015, 50.0),
        (0.015, 0.010, -50.0),
        (0.2, 0.25, 25.0),
        (0.25, 0.2, -25.0),
        (3.0, 3.0, 0.0),
        (0.001, 0.14, 13900.0),  # the seeds' 140× reads as +13 900 %
    ],
)
def test_signed_percent_is_the_seeds_formula(a: float, b: float, expected: float) -> None:
    assert signed_percent(a, b) == pytest.approx(expected)


def test_signed_percent_is_antisymmetric_and_rejects_non_positive_times() -> None:
    assert signed_percent(0.3, 0.7) == pytest.approx(-signed_percent(0.7, 0.3))
    with pytest.raises(ValueError):
        signed_percent(0.0, 1.0)


def test_median_and_iqr() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert median(values) == 3.0
    assert iqr(values) == pytest.approx(2.0)
    assert iqr([1.0]) is None
    assert median([]) is None


def test_noise_warning_above_ten_percent_of_the_median() -> None:
    assert not is_noisy([1.00, 1.01, 1.02, 0.99, 1.00])
    assert is_noisy([1.0, 1.3, 0.8, 1.2, 0.9])
    assert not is_noisy([1.0])  # one value: no spread to judge


def test_warmup_calls_are_excluded_from_the_statistics() -> None:
    clock = FakeClock()
    (t,) = measure(
        [clock.method("m", [1.0, 0.02])], warmup=2, repeats=4, min_block_s=0.0, clock=clock
    )
    assert t.warmup_s == pytest.approx((1.0, 0.02))
    assert t.times_s == pytest.approx((0.02,) * 4)
    assert t.number == 1
    assert clock.log == ["m"] * 6  # no minimum block: nothing grows it, no untimed block runs


def test_block_size_reaches_the_minimum_block_time() -> None:
    assert block_size(0.01, 0.05) == 5
    assert block_size(0.2, 0.05) == 1
    assert block_size(1e-9, 0.05, max_number=100) == 100
    clock = FakeClock()
    fast, slow = clock.method("fast", 0.001), clock.method("slow", 0.1)
    by_name = {
        t.name: t for t in measure([fast, slow], warmup=1, repeats=3, min_block_s=0.01, clock=clock)
    }
    assert by_name["fast"].number == 10
    assert by_name["fast"].times_s == pytest.approx((0.001,) * 3)  # per call, not per block
    assert by_name["slow"].number == 1


@pytest.mark.parametrize(
    ("warmup", "costs"),
    [
        (1, [0.5, 0.001]),  # the only warm-up call is the cold one: it traces
        (2, [0.5, 0.05, 0.001]),  # the last warm-up call was stalled by the machine
    ],
)
def test_a_block_grows_until_it_lasts_the_minimum(warmup: int, costs: list[float]) -> None:
    # Sized from that one slow call alone, every block would be a single 1 ms call, and one
    # stall of the machine would read as a tenfold slower method (a 6x tf.function gain read
    # as within the noise beside two CPU-bound jobs).
    clock = FakeClock()
    (t,) = measure(
        [clock.method("m", costs)], warmup=warmup, repeats=3, min_block_s=0.02, clock=clock
    )
    assert t.number == 20
    assert t.times_s == pytest.approx((0.001,) * 3)
    assert t.warmup_s == pytest.approx(tuple(costs[:warmup]))  # growing it is not a warm-up


def test_growing_a_block_that_raises_drops_the_method() -> None:
    clock = FakeClock()
    calls = [0]

    def breaks_on_second(n: int) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise ValueError("out of memory")
        clock.t += 0.5 if calls[0] == 1 else 0.001 * n

    good, bad = measure(
        [clock.method("good", 0.01), ("bad", breaks_on_second)],
        warmup=1,
        repeats=2,
        min_block_s=0.02,
        clock=clock,
    )
    assert bad.error == "ValueError: out of memory" and bad.times_s == ()
    assert good.number == 2 and len(good.times_s) == 2


def test_rounds_are_interleaved_and_rotated() -> None:
    clock = FakeClock()
    runners = [clock.method(n, 0.01) for n in ("a", "b", "c")]
    measure(runners, warmup=1, repeats=3, min_block_s=0.0, clock=clock)
    timed_rounds = clock.log[3:]
    assert timed_rounds == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]


def test_a_drifting_machine_favours_no_method() -> None:
    # Every call gets slower as the machine heats up; two identical methods must still tie.
    clock = FakeClock()

    def drifting(name: str) -> tuple[str, object]:
        def run(n: int) -> None:
            for _ in range(n):
                clock.t += 0.01 * (1 + clock.t)

        return name, run

    a, b = measure(
        [drifting("a"), drifting("b")], warmup=1, repeats=20, min_block_s=0.0, clock=clock
    )
    ma, mb = median(a.times_s), median(b.times_s)
    assert ma is not None and mb is not None
    assert abs(ma - mb) / ma < 0.01


def test_a_failing_method_keeps_its_error_and_the_others_still_run() -> None:
    clock = FakeClock()
    calls = [0]

    def flaky(n: int) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("XLA cannot compile op Foo\nlong details")
        clock.t += 0.01 * n

    steps: list[tuple[int, int]] = []
    good, bad = measure(
        [clock.method("good", 0.01), ("bad", flaky)],
        warmup=1,
        repeats=5,
        min_block_s=0.0,
        clock=clock,
        on_step=lambda done, total, _name: steps.append((done, total)),
    )
    assert bad.error == "RuntimeError: XLA cannot compile op Foo"
    assert bad.times_s == ()
    assert good.error is None and len(good.times_s) == 5
    assert steps[-1][0] == steps[-1][1] == 12  # progress completes despite the failure


def test_measure_refuses_no_warmup_and_duplicate_names() -> None:
    clock = FakeClock()
    with pytest.raises(ValueError):
        measure([clock.method("a", 0.1)], warmup=0, clock=clock)
    with pytest.raises(ValueError):
        measure([clock.method("a", 0.1), clock.method("a", 0.1)], clock=clock)


def test_fixed_number_overrides_the_block_time() -> None:
    clock = FakeClock()
    (t,) = measure(
        [clock.method("m", 0.5)], warmup=1, repeats=2, number=7, min_block_s=0.0, clock=clock
    )
    assert t.number == 7
    assert t.times_s == pytest.approx((0.5, 0.5))


def test_one_line_error() -> None:
    assert one_line(ValueError("first\nsecond")) == "ValueError: first"
    assert one_line(KeyError()) == "KeyError"
    assert len(one_line(RuntimeError("x" * 500))) == 200
