"""The accuracy corpus on Keras 3 on JAX (``corpus/cases_jax/``), run like
tests/test_corpus.py: for every case, its premise holds in this run (the fix really is faster;
for a compute-bound case, no Python-side change is), and tfdiag, run as the case's user runs
it, ranks the expected finding first with a fix that names the remedy — and never says
Python-side changes won't help where they do.

This file runs only in the JAX process (``KERAS_BACKEND=jax``, tests/on_jax/conftest.py), and
each case runs in a child process of its own (``corpus/run_one.py``): whether TensorFlow is
loaded is part of a Keras-on-JAX program (``clone_model`` and ``tf.data`` load it, the others
never do), and one case must not load it for the next. A case that misses is measured once
more, from a fresh process. ``make test`` runs the ``CORE`` cases; the others are ``slow``
(``make test-corpus``). A case with a ``known_miss`` is a strict xfail: it fails the run the
day tfdiag gets it right, and its ``known_miss`` is removed with the fix.
``benchmarks/accuracy.py --backend jax`` prints the table (docs/accuracy.md).
"""

from __future__ import annotations

from typing import Any

import pytest

from corpus.harness import Loaded, load_cases, premise_holds
from corpus.run_one import run_in_child

pytestmark = [pytest.mark.jax, pytest.mark.corpus]

CASES = load_cases(backend="jax")

#: The JAX cases ``make test`` runs (none may be a known miss): grown as tfdiag learns JAX.
CORE: frozenset[str] = frozenset({"jax-pydataset-no-workers", "jax-heavy-user-callback"})


def _measure(loaded: Loaded) -> dict[str, Any]:
    # Measured as benchmarks/accuracy.py measured the figure the case states: a median of
    # five interleaved rounds after two warm-ups (as tests/test_corpus.py does).
    row = run_in_child(loaded.case.id, backend="jax", rounds=5, warmup=2)
    assert "error" not in row, row.get("traceback") or row["error"]
    return row


def _right(case: Any, row: dict[str, Any]) -> bool:
    return bool(premise_holds(case, row["premise"]) and row["right_cause"] and row["right_fix"])


def test_the_jax_corpus_is_its_own() -> None:
    """At least ten JAX cases, each saying so, none among the TensorFlow cases."""
    assert len(CASES) >= 10
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
    row = _measure(loaded)
    if not _right(case, row):
        row = _measure(loaded)  # once more: the machine is shared and noisy
    premise = row["premise"]
    assert premise_holds(case, premise), f"premise {premise:.2f}× (stated {case.premise}×)"
    assert row["first"] == case.expect, f"first finding {row['first']}, all: {row['ids']}"
    assert row["right_fix"], f"the fix names none of {case.fix_mentions}: {row['fix']}"
    assert not (row["says_no_python_gain"] and case.python_fix), row["ids"]


def test_a_case_that_cannot_run_is_one_error_row() -> None:
    row = run_in_child("no-such-case", backend="jax", rounds=1)
    assert row["id"] == "no-such-case"
    assert row["error"] == "child exited 2 without a row"
