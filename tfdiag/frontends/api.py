"""``tfdiag.profile``: the call's passes (:mod:`tfdiag.capture.runner`), then, when asked,
each finding's fix verified on it (:mod:`tfdiag.measure.verify`, loaded only then). It sits
above both: capture imports nothing from measure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tfdiag.capture.ctrl_c import CtrlC
from tfdiag.capture.runner import Interrupted, profile_call
from tfdiag.measure.budget import DEFAULT_BUDGET_S, check_budget
from tfdiag.records.catalog import Rule
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.errors import InputError
from tfdiag.results.report import Report


def profile(
    fn: Callable[..., Any],
    *args: Any,
    iterations: int = 20,
    rules: Iterable[Rule] = (),
    findings: Iterable[FindingRule] = (),
    sampling: bool | None = None,
    tf_profiler: bool | None = None,
    verify: bool = False,
    verify_s: float = DEFAULT_BUDGET_S,
    progress: bool = True,
    **kwargs: Any,
) -> Report:
    """Profile ``fn(*args, **kwargs)`` and explain where its time goes.

    Two passes (docs/how-it-works.md): the cold first call and half of ``iterations``
    run under cProfile, so one-time build cost is visible beside per-iteration cost (the
    table is snapshotted after the cold call, so the steady state is known exactly);
    then ``iterations`` calls are timed without cProfile, watched by the light probes: the
    first block of them is traced with the TensorFlow profiler (the caller waiting for
    input, tf.data's threads, the model's own op time), and every call TensorFlow makes
    back into Python (``py_function``, ``numpy_function``, a generator) is timed. The
    whole diagnosis costs about twice the plain iterations (docs/probes.md).

    Args:
        fn: ``model.predict``, ``model.fit``, ``model.train_on_batch``, a model, or
            any callable.
        *args: passed to ``fn`` unchanged.
        iterations: calls after the cold one, in each pass.
        rules: extra culprit rules, tried before the built-in catalog.
        findings: your own findings (:class:`tfdiag.FindingRule`), run after the built-in ones.
        sampling: sample the call's stack in the timed pass (a second, full-stack
            breakdown; exports as a pyinstrument session or speedscope). Off by default.
        tf_profiler: trace the first block of the timed pass with the TensorFlow profiler
            and read it with xprof (op time vs wall time, input waits, top ops, XProf's
            verdict). ``None`` (default): on when the call uses TensorFlow.
        progress: a transient progress bar on stderr, on a terminal or in a notebook only,
            updated between calls (never inside a timed one); ``False`` or
            ``TFDIAG_PROGRESS=0``: none.
        verify: then build each finding's mechanical fix on this call, time it against the
            call as written (compare's engine) and check it; the result is each finding's
            ``verification`` (docs/verify.md). Training fixes run on clones of the model.
        verify_s: the seconds verification may take (default 60); findings it cannot reach
            in time say so.
        **kwargs: passed to ``fn`` unchanged (``epochs=1, verbose=0``...).

    Raises:
        InputError: ``fn`` is not callable or ``iterations`` is not a positive integer.
        ProfilerBusyError: another ``profile()`` is running in this process.
        Interrupted: Ctrl-C (a KeyboardInterrupt) during the run; its ``report`` holds the
            iterations done so far, marked partial.
        Exception: whatever ``fn`` raises, unchanged, with the profiler detached.
    """
    budget = check_budget(verify_s)
    if not isinstance(verify, bool):
        raise InputError(f"verify must be True or False, got {verify!r}")
    ctrl_c = CtrlC.install()
    try:
        report = _profile(
            ctrl_c, fn, args, kwargs, iterations=iterations, rules=rules, findings=findings,
            sampling=sampling, tf_profiler=tf_profiler, verify=verify, budget=budget,
            progress=progress,
        )  # fmt: skip
    except BaseException:
        ctrl_c.restore()  # a press as it goes back joins the exception on its way out
        raise
    # Made before the user's handler comes back: after it, tfdiag runs no Python call (where
    # a press would raise a bare KeyboardInterrupt in tfdiag's frame and lose the report).
    late = Interrupted("interrupted as the run finished: the report is complete", report)
    if ctrl_c.restore() or ctrl_c.noted:
        raise late
    return report


def _profile(
    ctrl_c: CtrlC,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    iterations: int,
    rules: Iterable[Rule],
    findings: Iterable[FindingRule],
    sampling: bool | None,
    tf_profiler: bool | None,
    verify: bool,
    budget: float,
    progress: bool,
) -> Report:
    """:func:`profile` with tfdiag's Ctrl-C handler in place (restored by the caller)."""
    from tfdiag.render.progress import progress_bar

    with progress_bar("tfdiag.profile", enabled=progress) as on_step:
        report = profile_call(
            fn,
            args,
            kwargs,
            iterations=iterations,
            rules=rules,
            findings=findings,
            sampling=sampling,
            tf_profiler=tf_profiler,
            on_step=on_step,
            ctrl_c=ctrl_c,
        )
    if ctrl_c.noted or not verify:  # noted: pressed after the passes, as the bar closed
        return report
    from tfdiag.measure.verify import VerifySettings, verify_report  # only when asked

    try:
        settings = VerifySettings(budget_s=budget)
        ctrl_c.arm()
        verified = verify_report(report, fn, args, kwargs, settings=settings, progress=progress)
        ctrl_c.disarm()  # verified: a press from here on is "as the run finished"
    except KeyboardInterrupt:
        ctrl_c.disarm()
        raise Interrupted(
            "interrupted while verifying: .report is complete, unverified", report
        ) from None
    return verified
