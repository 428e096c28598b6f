"""Classification by call count: the seeds' method, with k per iteration and no aliasing."""

from __future__ import annotations

import cProfile

import pytest
from synth import SITE, Node, build_stats

from tfdiag.analysis.classify import Classification, CostClass, classify, classify_calls
from tfdiag.capture.snapshot import snapshot


@pytest.mark.parametrize("calls", [1, 2])
def test_called_once_or_twice_is_build(calls: int) -> None:
    assert classify_calls(calls, 20).cost is CostClass.BUILD


@pytest.mark.parametrize(
    ("calls", "k", "extra"),
    [
        (20, 1, 0),  # once per iteration, cold call not counted
        (21, 1, 0),  # once per iteration, cold call included (N + 1)
        (60, 3, 0),  # 3 per iteration
        (63, 3, 0),  # 3 per iteration incl. the cold call
        (61, 3, 1),  # DESIGN.md: 61 traces in 20 predict calls = 3 per iteration + 1
        (42, 2, 0),
    ],
)
def test_k_per_iteration(calls: int, k: int, extra: int) -> None:
    c = classify_calls(calls, 20)
    assert c == Classification(CostClass.PER_ITERATION, float(k), extra)


def test_describe_shows_k_and_extra() -> None:
    assert classify_calls(61, 20).describe() == "3× per iteration (+1)"
    assert classify_calls(21, 20).describe() == "1× per iteration"
    assert classify_calls(1, 20).describe() == "build"


@pytest.mark.parametrize("calls", [3, 10, 19, 35, 50])
def test_other_counts_are_mixed(calls: int) -> None:
    c = classify_calls(calls, 20)
    assert c.cost is CostClass.MIXED
    assert c.per_iter == pytest.approx(calls / 20)


def test_too_few_iterations_cannot_say_per_iteration() -> None:
    # With N = 2, a function called 3 times could be "once per call" or noise.
    assert classify_calls(3, 2).cost is CostClass.MIXED


def test_iterations_must_be_positive() -> None:
    with pytest.raises(ValueError):
        classify_calls(5, 0)


def test_same_name_in_two_places_stays_two_rows() -> None:
    """The seeds' flaw: profiling by bare name merged `_func = func` into one row."""
    build_one = Node(SITE + "pkg/a.py", "_func", 0.5, calls=1, line=10)
    per_iter = Node(SITE + "pkg/b.py", "_func", 0.1, calls=21, line=99)
    stats = build_stats([Node("/app/main.py", "main", 0.0, children=[build_one, per_iter])])
    classes = dict(zip((f.key for f in stats.functions), classify(stats, 20)))
    assert classes[(SITE + "pkg/a.py", 10, "_func")].cost is CostClass.BUILD
    assert classes[(SITE + "pkg/b.py", 99, "_func")].cost is CostClass.PER_ITERATION
    # Merged by name they would be one row of 22 calls, and the 0.5 s of build time would
    # hide inside a per-iteration row.
    assert classify_calls(1 + 21, 20).cost is not CostClass.BUILD


class _A:
    def step(self) -> int:
        return sum(range(50))


class _B:
    def step(self) -> int:
        return sum(range(50))


def _helper() -> int:
    return 1


_alias = _helper


def test_live_profile_keys_by_qualified_name() -> None:
    prof = cProfile.Profile()
    a, b = _A(), _B()
    prof.enable()
    a.step()
    for _ in range(20):
        b.step()
        _alias()
    prof.disable()
    stats = snapshot(prof)
    names = {f.name: f for f in stats.functions if f.file == __file__}
    assert names["_A.step"].calls == 1
    assert names["_B.step"].calls == 20
    # The alias is recorded under the function's own name, never under `_alias`.
    assert names["_helper"].calls == 20 and "_alias" not in names
    # tfdiag's own frame (Profiler.disable) is not in the table.
    assert not any("disable" in f.name for f in stats.functions)
