"""``tfdiag.compare``: time the user's model across Keras execution methods, check, recommend."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from tfdiag.capture import native_log
from tfdiag.capture.environment import current_environment, describe_value
from tfdiag.capture.native_log import quiet
from tfdiag.measure.check import loss_problem, output_mismatch
from tfdiag.measure.methods import INFERENCE, TRAINING, Method, Prepared
from tfdiag.measure.subject import Subject, leaves
from tfdiag.measure.timing import Timed, measure, one_line
from tfdiag.measure.validate import (
    check_data,
    check_model,
    check_trainable,
    choose,
    pick_baselines,
    settings_from,
)
from tfdiag.records.clock import Clock, Progress, now_iso
from tfdiag.records.compare import MethodResult, Settings
from tfdiag.records.errors import InputError
from tfdiag.render.progress import progress_bar
from tfdiag.results.compare import CompareResult


def compare(
    model: Any,
    x: Any,
    y: Any = None,
    *,
    methods: Iterable[str | Method] | None = None,
    baseline: str | Iterable[str] | None = None,
    twins: Sequence[Any] = (),
    batch_size: int = 32,
    warmup: int = 2,
    repeats: int = 10,
    min_block_s: float = 0.01,
    rtol: float = 1e-3,
    atol: float = 1e-5,
    loss_rise: float = 0.5,
    clock: Clock = time.perf_counter,
    on_step: Progress | None = None,
    progress: bool = True,
) -> CompareResult:
    """Measure ``model`` on ``x`` (and ``y``) with every Keras execution method; recommend one.

    Inference methods always run; training methods run when ``y`` is given, each on
    its own copy of the model (``clone_model`` + ``set_weights``, compiled like the
    original with a fresh optimizer), so ``model`` and its optimizer are left as they
    were. One call of every method processes all of ``x`` once. Methods are timed
    interleaved after ``warmup`` calls; a method that raises keeps its one-line error
    and the others still run. Inference outputs are checked against the baseline's
    (``predict``; ``rtol``/``atol``), training losses for divergence (``loss_rise``); a
    method that fails or mismatches is never recommended.

    Args:
        model: a compiled or uncompiled ``keras.Model`` (Keras 3) or ``tf_keras.Model``.
        x: the input, as you pass it to ``predict``: an array or tensor, or a list/dict.
        y: targets; when given, training methods are measured too (the model must be
            compiled with a loss).
        methods: names from :data:`tfdiag.measure.methods.METHODS` or your own
            :class:`~tfdiag.measure.methods.Method` objects; all that apply by default.
        baseline: the method(s) you call today; speed-ups are measured against them
            (``predict`` and ``fit`` by default).
        twins: the same network built with another Keras flavour (a ``tf_keras`` model
            beside a Keras 3 one): its methods run too, named ``"<method> (tf_keras)"``,
            checked against its own ``predict``.
        batch_size: the batch size of ``predict``, ``fit`` and the per-batch methods.
        warmup: untimed calls per method before timing (at least 1).
        repeats: timed blocks per method.
        min_block_s: calls per block are chosen so a block lasts at least this long.
        rtol, atol: output tolerance against the baseline (``numpy.allclose``).
        loss_rise: a training loss that rises by more than this fraction is "diverged".
        clock: the timer (``time.perf_counter``).
        on_step: ``on_step(done, total, method)`` after each call or block, for progress.
        progress: without ``on_step``, a transient progress bar on stderr, on a terminal or
            in a notebook only, updated between timed blocks; ``False`` or
            ``TFDIAG_PROGRESS=0``: none.

    Raises:
        InputError: ``model`` is not a Keras model, ``x``/``y`` do not fit it, a method
            name is unknown, or a setting is out of range.
    """
    settings = settings_from(batch_size, warmup, repeats, min_block_s, rtol, atol, loss_rise)
    flavour = check_model(model)
    check_data(model, x, y)
    chosen = choose(methods, with_y=y is not None)
    if y is not None and any(m.kind == TRAINING for m in chosen):
        check_trainable(model)
    baselines = pick_baselines(baseline, chosen)
    subjects = [Subject(model, x, y, batch_size=batch_size, flavour=flavour)]
    for twin in twins:
        twin_flavour = check_model(twin)
        if twin_flavour in (s.flavour for s in subjects):
            raise InputError(f"a twin must be another Keras flavour than {twin_flavour}")
        check_data(twin, x, y)
        subjects.append(Subject(twin, x, y, batch_size=batch_size, flavour=twin_flavour))

    entries = [
        (m.name if i == 0 else f"{m.name} ({s.flavour})", m, s)
        for i, s in enumerate(subjects)
        for m in chosen
    ]
    prepared: dict[str, Prepared] = {}
    failed: dict[str, str] = {}
    # The methods are tfdiag's own calls: what they log natively (XLA's service and
    # "Compiled cluster" lines at jit_compile's first call, model copies) is kept, in
    # windows outside the progress bar's drawing and every timed block.
    with _quiet_retracing():
        with quiet():
            for name, method, subject in entries:
                try:
                    prepared[name] = method.prepare(subject)
                except Exception as exc:  # this method cannot run here; the others still do
                    failed[name] = one_line(exc)
        runners = [(name, _runner(p.run)) for name, p in prepared.items()]
        with progress_bar("tfdiag.compare", enabled=progress and on_step is None) as bar:
            timed = {
                t.name: t
                for t in measure(
                    runners,
                    warmup=warmup,
                    repeats=repeats,
                    min_block_s=min_block_s,
                    clock=clock,
                    on_step=on_step or bar,
                    warm_in=quiet,
                )
            }
        with quiet():
            records = _check(entries, prepared, failed, timed, settings, dict(baselines))
    notes = _notes(subjects, dict(baselines), records)
    kept, more = native_log.take()  # this comparison's: never a later report's
    if kept or more:
        notes.append(
            f"TensorFlow wrote {len(kept) + more} native log line(s) while tfdiag worked: kept "
            "off your terminal (TFDIAG_NATIVE_LOG=show prints them)"
        )
    return CompareResult(
        methods=tuple(records),
        model=describe_model(model),
        flavour=flavour,
        data=tuple(
            (k, describe_value(v) if not isinstance(v, (list, tuple, dict)) else _many(v))
            for k, v in (("x", x), ("y", y))
            if v is not None
        ),
        settings=settings,
        baselines=baselines,
        environment=current_environment(),
        notes=tuple(notes),
        created=now_iso(),
    )


class _RetracingFilter(logging.Filter):
    """TF warns when many model copies each trace their own train function once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "triggered tf.function retracing" not in record.getMessage()


@contextmanager
def _quiet_retracing() -> Iterator[None]:
    logger, flt = logging.getLogger("tensorflow"), _RetracingFilter()
    logger.addFilter(flt)
    try:
        yield
    finally:
        logger.removeFilter(flt)


def _runner(run: Any) -> Any:
    def block(number: int) -> None:
        for _ in range(number):
            run()

    return block


def _check(
    entries: list[tuple[str, Method, Subject]],
    prepared: dict[str, Prepared],
    failed: dict[str, str],
    timed: dict[str, Timed],
    settings: Settings,
    baselines: dict[str, str],
) -> list[MethodResult]:
    """Each method's record: timing, then its output or loss checked (untimed)."""
    records = []
    references: dict[str, tuple[str, Any]] = {}  # flavour -> (method name, output)
    for name, method, subject in _reference_first(entries, baselines):
        t = timed.get(name)
        error = failed.get(name) or (t.error if t is not None else None)
        p = prepared.get(name)
        mismatch = diff = after = None
        if error is None and p is not None:
            try:
                result = p.result()
            except Exception as exc:
                error = f"checking the result failed: {one_line(exc)}"
            else:
                if method.kind == TRAINING:
                    after = float(result)
                    mismatch = loss_problem(p.loss_before, after, loss_rise=settings.loss_rise)
                elif subject.flavour not in references:
                    references[subject.flavour] = (name, result)
                else:
                    ref_name, ref = references[subject.flavour]
                    mismatch, diff = output_mismatch(
                        result, ref, rtol=settings.rtol, atol=settings.atol, against=ref_name
                    )
        records.append(
            MethodResult(
                name=name,
                method=method.name,
                call=method.call,
                kind=method.kind,
                flavour=subject.flavour,
                eager=method.eager,
                number=t.number if t is not None else 1,
                times_s=t.times_s if t is not None and error is None else (),
                warmup_s=t.warmup_s if t is not None else (),
                error=error,
                mismatch=mismatch,
                max_abs_diff=diff,
                loss_before=p.loss_before if p is not None else None,
                loss_after=after,
            )
        )
    order = {name: i for i, (name, _, _) in enumerate(entries)}
    return sorted(records, key=lambda r: order[r.name])


def _reference_first(
    entries: list[tuple[str, Method, Subject]], baselines: dict[str, str]
) -> list[tuple[str, Method, Subject]]:
    """Check order: each flavour's inference baseline first, so it is the reference."""
    base = baselines.get(INFERENCE)
    return sorted(entries, key=lambda e: 0 if e[1].name == base else 1)


def _notes(
    subjects: list[Subject], baselines: dict[str, str], records: list[MethodResult]
) -> list[str]:
    notes = []
    base = baselines.get(INFERENCE)
    for s in subjects:
        infer = [r for r in records if r.flavour == s.flavour and r.kind == INFERENCE]
        checked = [r for r in infer if r.error is None]
        if checked and checked[0].method != base:
            notes.append(
                f"{s.flavour}: inference outputs are checked against {checked[0].name} "
                f"({base or 'the baseline'} did not run)"
            )
    if len(subjects) > 1:
        notes.append(
            "each flavour's outputs are checked against its own predict: the twin models "
            "have their own weights"
        )
    return notes


def describe_model(model: Any) -> str:
    try:
        params = f" · {model.count_params():,} parameters"
    except Exception:  # an unbuilt model has no parameter count yet
        params = ""
    return f"{type(model).__name__} {getattr(model, 'name', '')!r}{params}"


#: A list or dict of inputs is described by this many of its arrays at most.
_MANY = 8


def _many(value: Any) -> str:
    found = leaves(value)
    text = ", ".join(describe_value(leaf) for leaf in found[:_MANY])
    return text if len(found) <= _MANY else f"{text}, … ({len(found):,} inputs)"
