"""The accuracy corpus on Keras 3 on JAX (``corpus/cases_jax/``), run like
tests/test_corpus.py: for every case, its premise holds in this run (the fix really is faster;
for a compute-bound case, no Python-side change is), and tfdiag, run as the case's user runs
it, ranks the expected finding first with a fix that names the remedy — and never says
Python-side changes won't help where they do.

This file runs only in the JAX process (``KERAS_BACKEND=jax``, tests/on_jax/conftest.py):
Keras picks its backend once per process. A case that misses is measured once more, from a
fresh set-up. ``make test`` runs the ``CORE`` cases; the others are ``slow``
(``make test-corpus``). A case with a ``known_miss`` is a strict xfail: it fails the run the
day tfdiag gets it right, and its ``known_miss`` is removed with the fix.
``benchmarks/accuracy.py --backend jax`` prints the table (docs/accuracy.md).
"""

from __future__ import annotations

import gc
from typing import Any

import pytest

from corpus.harness import Loaded, diagnose, load_cases, measure_premise, premise_holds, verdict

pytestmark = [pytest.mark.jax, pytest.mark.corpus]

CASES = load_cases(backend="jax")

#: The JAX cases ``make test`` runs (none may be a known miss): grown as tfdiag learns JAX.
CORE: frozenset[str] = frozenset({"jax-pydataset-no-workers"})


def _clear_keras() -> None:
    import keras

    keras.backend.clear_session()
    gc.collect()


def _measure(loaded: Loaded) -> tuple[float, Any]:
    state = loaded.setup()
    try:
        premise = measure_premise(loaded, state, rounds=3, warmup=1).speedup
        return premise, verdict(loaded.case, diagnose(loaded, state))
    finally:
        del state
        _clear_keras()


def test_the_jax_corpus_is_its_own() -> None:
    """JAX cases, each saying so, none among the TensorFlow cases."""
    assert len(CASES) >= 6
    ids = [c.case.id for c in CASES]
    assert len(set(ids)) == len(ids)
    assert {c.case.backend for c in CASES} == {"jax"}
    tf_cases = load_cases()
    assert {c.case.backend for c in tf_cases} == {"tensorflow"}
    assert not set(ids) & {c.case.id for c in tf_cases}


def test_load_cases_refuses_an_unknown_backend() -> None:
    with pytest.raises(ValueError, match="no such backend"):
        load_cases(backend="torch")


def test_no_core_case_is_a_known_miss() -> None:
    ids = {c.case.id for c in CASES}
    assert CORE <= ids, sorted(CORE - ids)
    assert not [c.case.id for c in CASES if c.case.id in CORE and c.case.known_miss]


def _marks(loaded: Loaded) -> list[Any]:
    marks: list[Any] = [] if loaded.case.id in CORE else [pytest.mark.slow]
    if loaded.case.known_miss:
        marks.append(pytest.mark.xfail(strict=True, reason=loaded.case.known_miss))
    return marks


@pytest.mark.parametrize("loaded", [pytest.param(c, id=c.case.id, marks=_marks(c)) for c in CASES])
def test_case(loaded: Loaded) -> None:
    case = loaded.case
    premise, v = _measure(loaded)
    if not (premise_holds(case, premise) and v.right_cause and v.right_fix):
        premise, v = _measure(loaded)  # once more: the machine is shared and noisy
    assert premise_holds(case, premise), f"premise {premise:.2f}× (stated {case.premise}×)"
    assert v.first == case.expect, f"first finding {v.first}, all: {v.ids}"
    assert v.right_fix, f"the fix names none of {case.fix_mentions}: {v.fix}"
    assert not (v.says_no_python_gain and case.python_fix), v.ids
