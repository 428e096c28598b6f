"""The accuracy corpus: small slow TensorFlow/Keras programs, each modelled on a public issue.

Every case is one module in ``corpus/cases/`` (TensorFlow and Keras on TensorFlow) or
``corpus/cases_jax/`` (Keras 3 on JAX, run in a process of its own with
``KERAS_BACKEND=jax``: Keras picks its backend once per process) with:

- ``CASE``: a :class:`Case` (what it is, where it comes from, what tfdiag must say);
- ``setup() -> state``: build the model and data (not timed);
- ``slow(state)``: one iteration of the program as the user wrote it;
- ``fast(state)``: the same work with the maintainers' fix (the premise: it is faster);
- optionally ``target(state) -> (fn, args, kwargs)``: what the user hands to
  ``tfdiag.profile`` (default: ``slow`` itself with ``state``);
- optionally ``diagnose(state, iterations) -> tfdiag.Report``: how the user runs tfdiag
  when it is not ``tfdiag.profile`` on the target (the Keras callback inside ``fit``, a
  bare ``.prof`` read back with ``explain``...); ``diagnose = under_run(program.__file__)``
  for a program its user runs whole with ``tfdiag run``.

:func:`measure_premise` times ``slow`` against ``fast`` interleaved (medians of several
rounds); :func:`diagnose` runs tfdiag on the case; :func:`verdict` checks the first
finding and its fix. ``benchmarks/accuracy.py`` prints the table; ``tests/test_corpus.py``
asserts every case.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

CASES_DIR = Path(__file__).resolve().parent / "cases"
#: Keras 3 on JAX: these cases run only in a process with ``KERAS_BACKEND=jax``.
JAX_CASES_DIR = Path(__file__).resolve().parent / "cases_jax"
#: Each backend's folder of cases (``Case.backend`` names one).
CASE_DIRS = {"tensorflow": CASES_DIR, "jax": JAX_CASES_DIR}


@dataclass(frozen=True)
class Case:
    """What one corpus case is and what tfdiag must say about it.

    Attributes:
        id: short stable name, e.g. ``"predict-in-loop"`` (the module is ``cases/<id>.py``
            with ``-`` as ``_``).
        title: the symptom as a user would phrase it.
        source: the public issue(s) it is modelled on (``repo#N``), or a doc page.
        mechanism: one line: why the slow program is slow.
        expect: the finding id tfdiag must rank first.
        fix_mentions: the first finding's fix must mention at least one of these
            (case-sensitive substrings: API names such as ``predict_on_batch``).
        premise: the speed-up the fix gives, as measured here (fast is at least this many
            times faster than slow); the test asserts at least half of it, in one run.
        iterations: what the user passes as ``iterations=`` (or batches profiled).
        also: other finding ids that may appear (anywhere) without being wrong.
        python_fix: False when no Python-side change helps (compute-bound cases): then
            ``premise`` is the ratio the best Python-side change gives (about 1), and
            the premise holds when the measured ratio stays below
            :data:`NO_GAIN_BELOW`, not when it reaches ``premise``.
        known_miss: why tfdiag gets this case wrong today (first finding or fix), where
            it does: the expectation stays what is true of the program, the test marks
            the case ``xfail(strict=True)`` so it turns into a failure (XPASS) the day a
            fix makes it right, and then this field must be removed.
        backend: the Keras backend the program runs on: ``"tensorflow"`` (``cases/``) or
            ``"jax"`` (``cases_jax/``, Keras 3 with ``KERAS_BACKEND=jax``).
    """

    id: str
    title: str
    source: str
    mechanism: str
    expect: str
    fix_mentions: tuple[str, ...]
    premise: float
    iterations: int = 10
    also: tuple[str, ...] = ()
    python_fix: bool = True
    known_miss: str = ""
    backend: str = "tensorflow"


#: A ``python_fix=False`` case's best Python-side change must stay below this ratio.
NO_GAIN_BELOW = 1.3


@dataclass(frozen=True)
class Loaded:
    case: Case
    module: ModuleType

    def setup(self) -> Any:
        return self.module.setup()

    def slow(self, state: Any) -> Any:
        return self.module.slow(state)

    def fast(self, state: Any) -> Any:
        return self.module.fast(state)

    def target(self, state: Any) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        fn = getattr(self.module, "target", None)
        if fn is None:
            return self.module.slow, (state,), {}
        return fn(state)  # type: ignore[no-any-return]


def load_cases(names: list[str] | None = None, *, backend: str = "tensorflow") -> list[Loaded]:
    """Every case of one backend (sorted by file name), or those named.

    ``backend="tensorflow"`` loads ``cases/``, ``backend="jax"`` loads ``cases_jax/`` (import
    them only in a process whose Keras runs on JAX); each case's ``backend`` must match.
    """
    if backend not in CASE_DIRS:
        raise ValueError(f"no such backend: {backend!r} (one of {', '.join(CASE_DIRS)})")
    out = []
    for path in sorted(CASE_DIRS[backend].glob("*.py")):
        if path.name.startswith("_"):
            continue
        prefix = "corpus_case" if backend == "tensorflow" else f"corpus_case_{backend}"
        spec = importlib.util.spec_from_file_location(f"{prefix}_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        case = module.CASE
        assert case.id.replace("-", "_") == path.stem, (case.id, path.name)
        assert case.backend == backend, (case.id, case.backend, backend)
        if names is None or case.id in names:
            out.append(Loaded(case, module))
    return out


@dataclass(frozen=True)
class Premise:
    slow_s: float
    fast_s: float

    @property
    def speedup(self) -> float:
        return self.slow_s / self.fast_s if self.fast_s > 0 else float("inf")


def premise_holds(case: Case, measured: float) -> bool:
    """Does one measured ``slow/fast`` ratio bear the case's premise out?

    A Python-fix case needs at least half of ``premise`` (one noisy run on shared
    CPUs); a ``python_fix=False`` case needs the ratio below :data:`NO_GAIN_BELOW`.
    """
    if not case.python_fix:
        return measured < NO_GAIN_BELOW
    return measured >= case.premise / 2


def measure_premise(loaded: Loaded, state: Any, *, rounds: int = 5, warmup: int = 2) -> Premise:
    """Median seconds per iteration of ``slow`` and ``fast``, interleaved round by round."""
    clock = time.perf_counter
    for _ in range(warmup):
        loaded.slow(state)
        loaded.fast(state)
    slow: list[float] = []
    fast: list[float] = []
    # Bound methods are new objects on every attribute access, so pair each with its list.
    pairs = ((loaded.slow, slow), (loaded.fast, fast))
    for r in range(rounds):
        for fn, times in pairs if r % 2 == 0 else pairs[::-1]:
            t0 = clock()
            fn(state)
            times.append(clock() - t0)
    return Premise(statistics.median(slow), statistics.median(fast))


def under_run(program: str) -> Callable[[Any, int], Any]:
    """A case's ``diagnose`` for a program its user runs with ``tfdiag run``: the script is
    run whole, and its first call site's report is the verdict's."""

    def diagnose(state: Any, iterations: int) -> Any:
        from tfdiag.script.instrument import run_script

        return run_script(program, iterations=iterations).sites[0].report

    return diagnose


def under_script(program: str) -> Callable[[Any, int], Any]:
    """A case's ``diagnose`` for a program run with ``tfdiag run`` whose finding is the
    script's own (a line or a jitted step outside every Keras call site): the verdict is on
    the script's findings, in the order ``tfdiag run`` shows them."""

    def diagnose(state: Any, iterations: int) -> Any:
        from types import SimpleNamespace

        from tfdiag.advise.script import script_findings
        from tfdiag.script.instrument import run_script

        result = run_script(program, iterations=iterations)
        found = tuple(sf.finding for sf in script_findings(result))
        return SimpleNamespace(findings=found, notes=result.notes)

    return diagnose


def diagnose(loaded: Loaded, state: Any) -> Any:
    """Run tfdiag on the case as its user would; returns the report."""
    import tfdiag

    custom = getattr(loaded.module, "diagnose", None)
    if custom is not None:
        return custom(state, loaded.case.iterations)
    fn, args, kwargs = loaded.target(state)
    return tfdiag.profile(fn, *args, iterations=loaded.case.iterations, **kwargs)


@dataclass(frozen=True)
class Verdict:
    first: str | None
    fix: str
    ids: tuple[str, ...]
    right_cause: bool
    right_fix: bool
    #: A finding said Python-side changes won't help although the fix is Python-side.
    says_no_python_gain: bool


def verdict(case: Case, report: Any) -> Verdict:
    findings = report.findings
    first = findings[0] if findings else None
    fix = first.fix if first is not None else ""
    no_gain = any("won't help" in f.fix or "won’t help" in f.fix for f in findings)
    return Verdict(
        first=first.id if first is not None else None,
        fix=fix,
        ids=tuple(f.id for f in findings),
        right_cause=first is not None and first.id == case.expect,
        right_fix=first is not None and any(m in fix for m in case.fix_mentions),
        says_no_python_gain=no_gain,
    )
