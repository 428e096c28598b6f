"""What several detectors read off one run: functions by catalog role (or by glob, for the
user's own findings), calls per iteration, the Keras call the run is really about, its steps
and epochs, and the TF profiler's figures.

Pure functions of a record and its analysis.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tfdiag.advise.finding import CallKind, Context, call_kind
from tfdiag.analysis.oplevel import OpFigures, op_figures
from tfdiag.analysis.pipeline import Analysis
from tfdiag.records.catalog import Category, framework_modules
from tfdiag.records.paths import is_user_code
from tfdiag.records.report import RunRecord
from tfdiag.records.stats import FunctionStat
from tfdiag.records.units import fmt_pct0

pct = fmt_pct0


def functions(record: RunRecord, path: str, name: str) -> Iterator[tuple[int, FunctionStat]]:
    """Rows whose module path and (qualified or last) name match the globs, in table order:
    a lookup in the profile's index (each question is answered once per record)."""
    fns = record.profile.functions
    for i in record.profile.index.find(path, name):
        yield i, fns[i]


def with_role(
    record: RunRecord, analysis: Analysis, role: str, name: str = "*"
) -> Iterator[tuple[int, FunctionStat]]:
    """Rows holding a catalog role (``step``, ``tracer``...), in table order; with ``name``,
    only those whose qualified or last name matches that glob."""
    fns = record.profile.functions
    for i in analysis.with_role(role, name):
        yield i, fns[i]


def per_iteration(analysis: Analysis, rows: Iterator[tuple[int, FunctionStat]]) -> float:
    """Steady-state calls per iteration of the heaviest-called of ``rows`` (0 when none)."""
    return max((analysis.steady_calls_per_iteration(i) for i, _ in rows), default=0.0)


def times(analysis: Analysis, i: int) -> str:
    """``3×`` (or ``0.5×``) per steady-state iteration."""
    return f"{analysis.steady_calls_per_iteration(i):.3g}×"


def category_of(analysis: Analysis, i: int) -> Category | None:
    rule = analysis.rules[i]
    return rule.category if rule is not None else None


def steady_share(analysis: Analysis, i: int) -> float:
    """Function ``i``'s cumulative steady-state time as a share of the steady state."""
    if analysis.steady_s <= 0:
        return 0.0
    return min(analysis.of_steady(analysis.steady.functions[i].cum_s), 1.0)


def tf_figures(record: RunRecord) -> OpFigures | None:
    """The TF profiler's op-level figures, when it ran."""
    tf = record.probes.tf_profile if record.probes is not None else None
    return op_figures(tf) if tf is not None else None


# -- the Keras call and its steps -----------------------------------------------------------


@dataclass(frozen=True)
class KerasCall:
    """The Keras method the run is about: the one profiled, or the one a user's loop calls.

    ``per_iteration`` is its calls per profiled iteration (1 when it is what was profiled).
    """

    kind: CallKind
    method: str
    per_iteration: float
    looped: bool


def keras_call(record: RunRecord, analysis: Analysis) -> KerasCall | None:
    """The profiled Keras method, or the one the profiled function calls (most time)."""
    kind = call_kind(record.call.method)
    if kind is not CallKind.OTHER:
        return KerasCall(kind, record.call.method, 1.0, looped=False)
    best: tuple[float, int] | None = None
    for i in analysis.with_role("entry"):
        per = analysis.steady_calls_per_iteration(i)
        if per >= 1 and (best is None or analysis.steady.functions[i].cum_s > best[0]):
            best = (analysis.steady.functions[i].cum_s, i)
    if best is None:
        return None
    name = record.profile.functions[best[1]].name.rsplit(".", 1)[-1]
    per = analysis.steady_calls_per_iteration(best[1])
    return KerasCall(call_kind(name), name, per, looped=True)


def effective_kind(ctx: Context) -> CallKind:
    """The call kind the advice is for: the Keras method inside a user's loop when there is
    one, a custom loop for other user code, else what was profiled."""
    call = keras_call(ctx.record, ctx.analysis)
    if call is not None:
        return call.kind
    if ctx.kind is CallKind.OTHER and is_user_function(ctx.record):
        return CallKind.LOOP
    return ctx.kind


def is_user_function(record: RunRecord) -> bool:
    """Was a function of the user's own (not a framework's method) profiled?"""
    target = record.call.target
    return bool(target) and not target.startswith(tuple(f"{m}." for m in framework_modules()))


_HOOKS = {
    "train": "*CallbackList.on_train_batch_begin",
    "test": "*CallbackList.on_test_batch_begin",
    "predict": "*CallbackList.on_predict_batch_begin",
}


@dataclass(frozen=True)
class Steps:
    """Batches (Keras steps) and epochs per steady iteration, counted by the callback hooks
    Keras calls once per batch and once per epoch; ``kind`` is ``train``/``test``/``predict``;
    ``calls`` is how many Keras calls (``fit``...) make them per iteration."""

    per_iteration: float
    epochs: float
    kind: str
    calls: float = 1.0

    @property
    def per_epoch(self) -> float:
        return self.per_iteration / self.epochs if self.epochs >= 1 else self.per_call

    @property
    def per_call(self) -> float:
        return self.per_iteration / max(self.calls, 1.0)

    @property
    def epochs_per_call(self) -> float:
        return self.epochs / max(self.calls, 1.0)


#: The steps that belong to a Keras method: ``fit``'s are its training steps even when its
#: validation runs more (test) steps per epoch.
_STEPS_OF = {CallKind.FIT: "train", CallKind.EVALUATE: "test", CallKind.PREDICT: "predict"}


def steps_per_epoch_of_batches(record: RunRecord) -> int | None:
    """The steps per epoch of a ``fit`` whose record's iterations are its batches (what
    ``ProfileCallback`` and ``tfdiag run``'s fit probe record: the call's ``batches`` range,
    with ``steps`` from the params Keras gives its callbacks); None for any other record."""
    kwargs = dict(record.call.kwargs)
    if record.call.method != "fit" or "batches" not in kwargs:
        return None
    steps = kwargs.get("steps", "")
    return int(steps) if steps.isdigit() and int(steps) > 0 else None


def keras_steps(record: RunRecord, analysis: Analysis) -> Steps | None:
    """The steps of the Keras loop in the run: the Keras call's own kind of step when it
    makes some (``fit``'s training steps), else the busiest of train/test/predict."""
    call = keras_call(record, analysis)
    calls = call.per_iteration if call is not None else 1.0
    counts = {kind: step_hooks_per_iteration(record, analysis, kind) for kind in _HOOKS}
    own = _STEPS_OF.get(call.kind) if call is not None else None
    if own is not None and counts[own] > 0:
        kind = own
    else:
        kind = max(counts, key=lambda k: counts[k])
        if counts[kind] <= 0:
            return None
    epochs = per_iteration(
        analysis, with_role(record, analysis, "callback-hook", "*CallbackList.on_epoch_begin")
    )
    return Steps(counts[kind], epochs if kind == "train" else calls, kind, calls)


def step_hooks_per_iteration(record: RunRecord, analysis: Analysis, kind: str) -> float:
    """Keras' per-batch hook calls of ``kind`` (``train``/``test``/``predict``) per steady
    iteration: the steps of that kind."""
    return per_iteration(analysis, with_role(record, analysis, "callback-hook", _HOOKS[kind]))


def graph_calls_per_iteration(record: RunRecord, analysis: Analysis) -> float:
    """Calls of already-traced graph functions per steady iteration (tf.function steps)."""
    return per_iteration(analysis, with_role(record, analysis, "graph-call"))


def iterators_per_read(record: RunRecord, analysis: Analysis) -> tuple[float, float] | None:
    """A user's loop that makes a new iterator for (nearly) every batch it reads
    (``next(iter(ds))``): ``(iterators per iteration, next() calls per iterator)``; None when
    Keras reads the data or each iterator reads more than a couple of batches."""
    if keras_call(record, analysis) is not None:
        return None
    created = per_iteration(analysis, with_role(record, analysis, "iterator-create"))
    reads = per_iteration(analysis, with_role(record, analysis, "iterator-next"))
    if created < 1 or reads < 1 or reads / created > 2:
        return None
    return created, reads / created


def user_frames(record: RunRecord) -> Iterator[tuple[int, FunctionStat]]:
    for i, fn in enumerate(record.profile.functions):
        if is_user_code(fn.file):
            yield i, fn


def python_callbacks(record: RunRecord, limit: int = 2) -> str:
    """The Python functions TensorFlow called back during the timed pass (``py_function``,
    ``numpy_function``, a generator), heaviest first, with their cost per iteration."""
    n = max(len(record.timing.iteration_s), 1)
    parts = []
    for cb in record.py_callbacks[:limit]:
        where = (
            f" ({cb.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{cb.line})" if cb.file else ""
        )
        parts.append(
            f"`{cb.function}`{where}, {cb.calls / n:.3g} calls per iteration, "
            f"{cb.seconds / max(cb.calls, 1) * 1e3:.2f} ms each"
        )
    return "; ".join(parts)


@dataclass(frozen=True)
class Rebuilt:
    """A ``tfdiag run`` call site whose model was new (``"model"``) or re-compiled
    (``"compile"``) before most of its later calls: what ``run`` saw at each call's entry
    (the call facts ``calls.later``, ``calls.new_model``, ``calls.recompiled``)."""

    kind: str
    calls: int
    later: int

    @property
    def line(self) -> str:
        what = (
            "a different model object"
            if self.kind == "model"
            else "the same model, re-compiled (its compiled step function was reset)"
        )
        return f"{self.calls} of this site's {self.later} later calls were on {what}"


def rebuilt_between_calls(record: RunRecord) -> Rebuilt | None:
    """A model rebuilt or re-compiled between a site's calls, on at least half of them."""
    try:
        later = int(record.call.fact("calls.later") or 0)
        new = int(record.call.fact("calls.new_model") or 0)
        compiled = int(record.call.fact("calls.recompiled") or 0)
    except ValueError:
        return None
    if later < 2:
        return None
    kind, count = ("model", new) if new >= compiled else ("compile", compiled)
    return Rebuilt(kind, count, later) if 2 * count >= later else None


#: A Keras call of more steps than this, made once (not in a loop of the user's), pays its
#: set-up (an input pipeline, its tf.data traces) once per call: no finding of its own.
MAX_STEPS_OF_A_SHORT_CALL = 8


def one_long_call(record: RunRecord, analysis: Analysis) -> bool:
    """Is the profiled work one Keras call of many steps, not made in a loop of the user's
    (a 64-batch ``fit``)? Its per-call set-up is paid once; remedies for calls per batch
    (``train_on_batch``, fewer and longer calls) would be for another program."""
    keras = keras_call(record, analysis)
    steps = keras_steps(record, analysis)
    return (
        keras is not None
        and not keras.looped
        and steps is not None
        and steps.per_call > MAX_STEPS_OF_A_SHORT_CALL
    )
