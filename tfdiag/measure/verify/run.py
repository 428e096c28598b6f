"""Verify findings: build each mechanical fix of the profiled call, time it against the call as
written with compare's engine (:func:`tfdiag.measure.timing.measure`: warm-up, interleaved
blocks), check it, and keep the raw records (:class:`~tfdiag.records.verification.Verification`).

Inference variants are checked output against the call as written's output (``np.allclose``,
as ``compare`` does); training variants by their loss trajectory: the call as written and the
variant each train a clone from the same weights on the same data for the same amount of
work, and their losses after each stretch must agree. A variant that raises or mismatches
keeps its one-line reason and is never the recommended fix.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tfdiag.advise import Finding
from tfdiag.measure.budget import DEFAULT_BUDGET_S
from tfdiag.measure.check import loss_problem, output_mismatch
from tfdiag.measure.run import _quiet_retracing
from tfdiag.measure.timing import measure, one_line
from tfdiag.measure.verify.call import Call
from tfdiag.measure.verify.inference import baseline_inference, rerunnable
from tfdiag.measure.verify.table import FIXES, NO_FIX
from tfdiag.measure.verify.training import baseline_training, trainable
from tfdiag.measure.verify.variant import TRAINING, Built, NotApplicable, Variant
from tfdiag.records.clock import Clock, Progress
from tfdiag.records.fields import MAX_SECONDS
from tfdiag.records.units import fmt_s
from tfdiag.records.verification import VariantRun, Verification

#: A training variant's clone, compile and first trace, as the budget estimates it.
TRAINING_SETUP_S = 2.0


@dataclass(frozen=True)
class Check:
    """What a variant's result was compared with, the outcome, the reason it failed."""

    what: str
    passed: bool
    problem: str | None = None
    diff: float | None = None


@dataclass(frozen=True)
class VerifySettings:
    """How verification measures: the budget, compare's timing settings, the tolerances.

    Training variants are checked over ``points`` stretches of the same work: after each, the
    variant's loss must be within ``loss_rtol`` of the progress the call as written made so far
    (``|loss - ref| ≤ loss_rtol·|ref - before| + loss_atol·|before| + 2·spread``, the spread
    being how far a second run of the call as written lands from the first), and must not diverge
    (``loss_rise``, as in compare). A variant that trains on other data, at another learning
    rate or in another direction makes other progress and is rejected.
    """

    budget_s: float = DEFAULT_BUDGET_S
    warmup: int = 2
    repeats: int = 7
    min_block_s: float = 0.02
    rtol: float = 1e-3
    atol: float = 1e-5
    loss_rtol: float = 0.25
    loss_atol: float = 1e-3
    loss_rise: float = 0.5
    points: int = 2


def verify_findings(
    call: Call,
    findings: Sequence[Finding],
    *,
    settings: VerifySettings | None = None,
    call_s: float | None = None,
    fixes: Mapping[str, Sequence[Variant]] = FIXES,
    no_fix: Mapping[str, str] = NO_FIX,
    clock: Clock = time.perf_counter,
    on_step: Progress | None = None,
) -> tuple[Verification, ...]:
    """One :class:`Verification` per finding, in the findings' order. ``call_s`` is the
    call's measured median (for the budget); ``fixes`` and ``no_fix`` the tables."""
    settings = settings or VerifySettings()
    start = clock()
    out = []
    for f in findings:
        variants = tuple(v for v in fixes.get(f.id, ()) if not v.elsewhere())
        if not variants:
            why = no_fix.get(f.id, "tfdiag has no mechanical fix for this finding")
            out.append(Verification(f.id, skipped=f"no mechanical fix: {why}"))
            continue
        reasons = [(v, v.why_not(call)) for v in variants]
        chosen = [v for v, why in reasons if why is None]
        # a variant that would drop part of the call is named beside those measured
        dropping = tuple(
            f"{v.name}: not measured, {why}"
            for v, why in reasons
            if why is not None and v.applies(call) is None
        )
        if not chosen:
            whys = {why for _, why in reasons}
            said = (
                whys.pop() or ""
                if len(whys) == 1
                else "; ".join(f"{v.name}: {why}" for v, why in reasons)
            )
            out.append(Verification(f.id, skipped=f"no mechanical fix applies here ({said})"))
            continue
        spent = clock() - start
        need = _estimate(call, chosen, settings, call_s)
        if spent + need > settings.budget_s:
            out.append(
                Verification(
                    f.id,
                    skipped=f"budget: verify_s={settings.budget_s:g} s, {fmt_s(spent)} spent, "
                    f"about {fmt_s(need)} needed",
                )
            )
            continue
        with _quiet_retracing():
            done = _verify(call, f.id, chosen, settings, clock, on_step)
        out.append(replace(done, notes=(*dropping, *done.notes)) if done.variants else done)
    return tuple(out)


def _estimate(
    call: Call, chosen: Sequence[Variant], s: VerifySettings, call_s: float | None
) -> float:
    block = max(s.min_block_s, call_s or 0.0)
    timing = (s.warmup + s.repeats) * (len(chosen) + 1) * block
    if call.method in ("fit", "train_on_batch"):
        timing += TRAINING_SETUP_S * (len(chosen) + 1)
    return timing


def _training(call: Call) -> bool:
    return call.method in ("fit", "train_on_batch")


def _verify(
    call: Call,
    finding: str,
    chosen: Sequence[Variant],
    s: VerifySettings,
    clock: Clock,
    on_step: Progress | None,
) -> Verification:
    training = _training(call)
    if training and (why := trainable(call)) is not None:
        return Verification(finding, skipped=f"the call cannot be re-run on a clone: {why}")
    if not training and (why := rerunnable(call)) is not None:
        return Verification(finding, skipped=f"the call cannot be re-run: {why}")
    try:
        base = baseline_training(call) if training else baseline_inference(call)
    except Exception as exc:
        return Verification(
            finding, skipped=f"the call as written cannot be rebuilt: {one_line(exc)}"
        )
    built: dict[str, Built] = {}
    runs: dict[str, VariantRun] = {}
    notes: list[str] = []
    for v in chosen:
        try:
            built[v.name] = v.prepare(call)
        except NotApplicable as exc:
            notes.append(f"{v.name}: not applicable ({exc})")
        except Exception as exc:
            runs[v.name] = VariantRun(
                v.name, "", _kind(call), v.role, problem=f"building it failed: {one_line(exc)}"
            )
    checks: dict[str, Check] = {}
    if training:  # a second run of the call as written measures its own run-to-run spread
        checks = _trajectories(base, baseline_training(call), built, s)
    live = {n: b for n, b in built.items() if n not in checks or checks[n].problem is None}
    timed = {
        t.name: t
        for t in measure(
            [("as written", _runner(base)), *((n, _runner(b)) for n, b in live.items())],
            warmup=s.warmup,
            repeats=s.repeats,
            min_block_s=s.min_block_s,
            clock=clock,
            on_step=(lambda d, t, n: on_step(d, t, f"{finding}: {n}")) if on_step else None,
        )
    }
    baseline = timed["as written"]
    if not training and baseline.error is None:
        checks = _outputs(base, live, s)
    for v in chosen:
        b = built.get(v.name)
        if b is None:
            continue
        t = timed.get(v.name)
        c = checks.get(v.name, Check("", False, "not checked"))
        what, passed, problem = c.what, c.passed, c.problem
        if t is not None and t.error is not None:
            problem, passed = f"raised: {t.error}", False
        if b.note:
            notes.append(f"{v.name}: {b.note}")
        runs[v.name] = VariantRun(
            name=v.name,
            fix=b.fix,
            kind=_kind(call),
            role=v.role,
            number=t.number * b.units if t is not None else b.units,
            times_s=tuple(x / b.units for x in t.times_s) if t is not None and not problem else (),
            warmup_s=tuple(x / b.units for x in t.warmup_s) if t is not None else (),
            check=what,
            passed=passed,
            problem=problem,
            max_abs_diff=c.diff,
        )
    if baseline.error is not None:
        notes.append(f"the call as written raised when re-run: {baseline.error}")
    return Verification(
        finding=finding,
        baseline=base.fix,
        baseline_times_s=baseline.times_s,
        baseline_number=baseline.number,
        variants=tuple(runs[v.name] for v in chosen if v.name in runs),
        notes=tuple(notes),
    )


def _kind(call: Call) -> str:
    return TRAINING if _training(call) else "inference"


def _runner(b: Built) -> Any:
    run = b.run

    def block(number: int) -> None:
        for _ in range(number):
            run()

    return block


def _outputs(base: Built, live: Mapping[str, Built], s: VerifySettings) -> dict[str, Check]:
    """Each variant's output against the call as written's (untimed, after timing)."""
    assert base.result is not None
    reference = base.result()
    out: dict[str, Check] = {}
    for name, b in live.items():
        what = f"outputs match the call as written (rtol {s.rtol:g}, atol {s.atol:g})"
        try:
            assert b.result is not None
            expected = b.expected(reference) if b.expected is not None else reference
            mismatch, diff = output_mismatch(
                b.result(), expected, rtol=s.rtol, atol=s.atol, against="the call as written"
            )
        except Exception as exc:
            out[name] = Check(what, False, f"checking its output failed: {one_line(exc)}")
            continue
        diff = min(diff, MAX_SECONDS) if diff is not None else None
        if mismatch is None:
            shown = f"max |Δ| {diff:.2g}; " if diff else "identical; "
            out[name] = Check(what.replace(" (", " (" + shown, 1), True, None, diff)
        else:
            out[name] = Check(what, False, mismatch, diff)
    return out


def _trajectories(
    base: Built, again: Built, built: Mapping[str, Built], s: VerifySettings
) -> dict[str, Check]:
    """Train the call as written (twice, on two clones) and each variant from the same weights
    for the same work, in ``points`` stretches; each variant's loss after each stretch must
    agree with the call as written's, within the tolerance plus twice the spread between the
    call's own two runs (``fit`` shuffles: two runs of the same call differ a little)."""
    units = max([b.units for b in built.values()] + [1])
    out: dict[str, Check] = {}
    try:
        assert base.loss is not None
        before = base.loss()
        reference = [_stretch(base, units) for _ in range(s.points)]
        spread = [abs(_stretch(again, units) - ref) for ref in reference]
    except Exception as exc:
        failed = f"the call as written could not be trained on a clone: {one_line(exc)}"
        return {name: Check("", False, failed) for name in built}
    shown = " → ".join(f"{x:.4g}" for x in [before, *reference])
    for name, b in built.items():
        what = (
            f"loss after {s.points}×{units} calls' training follows the call as written's "
            f"({shown}; within {100 * s.loss_rtol:g} % of its progress)"
        )
        try:
            assert b.loss is not None
            losses = [_stretch(b, units) for _ in range(s.points)]
        except Exception as exc:
            out[name] = Check(what, False, f"raised: {one_line(exc)}")
            continue
        got = " → ".join(f"{x:.4g}" for x in [before, *losses])
        problem: str | None = loss_problem(before, losses[-1], loss_rise=s.loss_rise)
        for ref, loss, noise in zip(reference, losses, spread):
            tol = s.loss_rtol * abs(ref - before) + s.loss_atol * max(abs(before), 1e-3)
            tol += 2 * noise
            if problem is None and not (math.isfinite(loss) and abs(loss - ref) <= tol):
                problem = f"loss trajectory differs from the call as written's: {got} vs {shown}"
        out[name] = Check(what + f": {got}", problem is None, problem)
    return out


def _stretch(b: Built, units: int) -> float:
    """Run ``b`` for ``units`` calls' worth of work; its loss after."""
    for _ in range(max(units // b.units, 1)):
        b.run()
    assert b.loss is not None
    return b.loss()
