"""One report from what a capture measured: written once for ``profile()``, the Keras
callback and ``tfdiag run``'s recorder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tfdiag.capture import native_log
from tfdiag.capture.environment import current_environment
from tfdiag.records.callbacks import PyCallback
from tfdiag.records.catalog import Rule
from tfdiag.records.catalog.backends import undiagnosed_line
from tfdiag.records.catalog.finding_rules import FindingRule
from tfdiag.records.clock import now_iso
from tfdiag.records.distributed import Distribution
from tfdiag.records.jit import JitCompile
from tfdiag.records.lines import LinesRecord
from tfdiag.records.machine import MachineLoad, NativeLog
from tfdiag.records.probes import Probes, SamplingRecord
from tfdiag.records.report import CallInfo, Timing
from tfdiag.records.stats import ProfileStats
from tfdiag.records.traces import TraceEvent
from tfdiag.results.report import Report


def steady_timing(
    profiled_s: Sequence[float], unprofiled_s: Sequence[float], traced: int = 0
) -> Timing:
    """A cold call and N iterations under the profiler, and more timed without it (the
    first ``traced`` of them under the TF profiler)."""
    return Timing(
        iterations=max(len(profiled_s) - 1, 1),
        profiled_calls=len(profiled_s),
        first_call_s=profiled_s[0] if profiled_s else None,
        iteration_s=tuple(unprofiled_s),
        profiled_iteration_s=tuple(profiled_s[1:]),
        traced=min(traced, len(unprofiled_s)),
    )


def build_report(
    *,
    call: CallInfo,
    timing: Timing,
    profile: ProfileStats,
    cold: ProfileStats | None,
    source: str,
    notes: Sequence[str] = (),
    rules: tuple[Rule, ...] = (),
    finding_rules: tuple[FindingRule, ...] = (),
    partial: bool = False,
    probes: Probes | None = None,
    traces: tuple[TraceEvent, ...] = (),
    py_callbacks: tuple[PyCallback, ...] = (),
    jit_compiles: tuple[JitCompile, ...] = (),
    distribution: Distribution | None = None,
    machine: MachineLoad | None = None,
    lines: LinesRecord | None = None,
    sampling: SamplingRecord | None = None,
) -> Report:
    """The report of a capture; it takes the native log lines kept since the last report
    (:mod:`tfdiag.capture.native_log`: TensorFlow's import, the TF profiler, xprof).
    ``sampling`` (the timed pass's sampler) joins the traced block's ``probes``."""
    if sampling is not None:
        probes = replace(probes or Probes(), sampling=sampling)
    environment = current_environment()  # its look for devices may log: kept, taken next
    native, more = native_log.take()
    if (line := undiagnosed_line(environment.framework)) is not None:
        notes = (*notes, line)
    return Report(
        call=call,
        environment=environment,
        timing=timing,
        profile=profile,
        cold_profile=cold,
        rules=rules,
        finding_rules=finding_rules,
        notes=tuple(notes),
        created=now_iso(),
        source=source,
        partial=partial,
        probes=probes,
        traces=traces,
        py_callbacks=py_callbacks,
        jit_compiles=jit_compiles,
        distribution=distribution,
        machine=machine,
        native_log=NativeLog(native, len(native) + more),
        lines=lines,
    )
