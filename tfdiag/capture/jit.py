"""The JAX compile probe: every ``jax.jit`` compilation during the profiled pass, timed per
stage and explained.

JAX reports each stage of a compilation through its public monitoring API
(``jax.monitoring.register_event_duration_secs_listener``): the trace to a jaxpr
(``/jax/core/compile/jaxpr_trace_duration``, with the Python function's name), the lowering
to MLIR and the XLA compile (``…/jaxpr_to_mlir_module_duration``,
``…/backend_compile_duration``, named ``jit(name)``). With ``jax_explain_cache_misses`` on
it also logs why a traced function missed its cache ("TRACING CACHE MISS …: different input
types: * at x, now f32[3] and before f32[2]"); the probe turns that text into a cause, the
argument and its values before and now. JAX is never imported here: when the program has
not imported it, nothing is recorded. Nothing reaches the user's log handlers.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any

from tfdiag.records.jit import MAX_COMPILES, JitCompile

TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
LOWER_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
#: The logger JAX's tracing-cache explanations go to (jax/_src/interpreters/partial_eval.py).
EXPLAIN_LOGGER = "jax._src.interpreters.partial_eval"

_MISS = "TRACING CACHE MISS"
_DEFINED = re.compile(r"^\s*(?:for )?(\S+)(?: id=\d+)? defined at (.+?):(\d+)\s*$", re.M)
_TREE = re.compile(r"\* at input path (\S+), now (.*?) and before (.*?), so")
_STATIC_VALUE = re.compile(r"Static\(val=(.*)\)")
_TYPES = re.compile(r"\* at (.+?), now (\S+) and before (\S+)")
_ARRAY = re.compile(r"^([a-z]+\d*)\[([^\]]*)\](\{weak_type=\w+\})?")
_POSITION = re.compile(r"^\[0\]\[(\d+)\]$")
_KEYWORD = re.compile(r"^\[1\]\[['\"](.+)['\"]\]$")
_MAX_VALUE = 120


def _argument(path: str) -> str:
    """``[0][1]`` → ``positional argument 1``; ``[1]['step']`` → ``step``."""
    if m := _POSITION.match(path):
        return f"positional argument {m.group(1)}"
    if m := _KEYWORD.match(path):
        return m.group(1)
    return path


def _cut(value: str) -> str:
    return value if len(value) <= _MAX_VALUE else value[: _MAX_VALUE - 1] + "…"


def _static_value(text: str) -> str:
    """``1`` from ``<class '…Static'> with pytree metadata Static(val=1)``; a text that
    holds no value (``pytree leaf``: an array before) is kept as it is."""
    m = _STATIC_VALUE.search(text)
    if m:
        return m.group(1)
    return "" if "Static" in text else text


def explain(message: str) -> dict[str, Any] | None:
    """The fields of one "TRACING CACHE MISS" explanation (None: another message)."""
    if _MISS not in message:
        return None
    out: dict[str, Any] = {"cause": "", "argument": "", "now": "", "before": ""}
    if m := _DEFINED.search(message):
        out.update(function=m.group(1), file=m.group(2), line=int(m.group(3)))
    if "never seen function" in message:
        out["cause"] = "first"  # a new function object: the detector tells a repeat
    elif "different input pytree" in message:
        out["cause"] = "structure"
        trees = _TREE.findall(message)
        static = [t for t in trees if "Static" in t[1]]  # a static argument (static_argnums)
        for path, now, before in static or trees[:1]:
            out.update(cause="static" if static else "structure", argument=_argument(path))
            out.update(now=_cut(_static_value(now)), before=_cut(_static_value(before)))
            break
    elif m := _TYPES.search(message):
        out.update(argument=m.group(1), now=_cut(m.group(2)), before=_cut(m.group(3)))
        now, before = _ARRAY.match(m.group(2)), _ARRAY.match(m.group(3))
        if now is None or before is None:
            out["cause"] = "dtype"
        elif now.group(3) != before.group(3):
            out["cause"] = "weak-type"
        elif now.group(1) != before.group(1):
            out["cause"] = "dtype"
        else:
            out["cause"] = "shape"
    elif "Tracing context" in message:
        out["cause"] = "context"
    return out


class CompileRecorder:
    """Collects :class:`JitCompile` s; ``call`` is set by the pass before each call. A
    :class:`~tfdiag.capture.session.Probe`: its record is the report's ``jit_compiles``."""

    field = "jit_compiles"

    def __init__(self) -> None:
        self.events: list[JitCompile] = []
        self.call = 0
        self.dropped = 0
        self._pending: dict[str, dict[str, Any]] = {}

    @staticmethod
    def applies(backend: str | None) -> bool:
        """On any backend: it attaches only where the program has imported JAX."""
        return True

    def attach(self) -> AbstractContextManager[bool]:
        return recording(self)

    def set_call(self, i: int) -> None:
        self.call = i

    def record(self, calls: int | None = None) -> tuple[JitCompile, ...]:
        """The compilations of calls ``0`` to ``calls - 1`` (None: all)."""
        return tuple(e for e in self.events if calls is None or 0 <= e.call < calls)

    def dropped_note(self) -> str | None:
        if not self.dropped:
            return None
        return f"{self.dropped} JAX compilation event(s) were not recorded"

    def on_duration(self, event: str, duration: float, **kwargs: Any) -> None:
        """JAX's duration listener: one stage of one compilation."""
        try:
            self._on_duration(event, float(duration), str(kwargs.get("fun_name", "")))
        except Exception:  # a record, never a reason for the user's call to fail
            self.dropped += 1

    def _on_duration(self, event: str, duration: float, name: str) -> None:
        if event == TRACE_EVENT:
            if len(self.events) >= MAX_COMPILES:
                self.dropped += 1
                return
            why = self._pending.pop(name, {})
            self.events.append(JitCompile(call=self.call, function=name, trace_s=duration, **why))
            return
        if event not in (LOWER_EVENT, COMPILE_EVENT):
            return
        base = name[4:-1] if name.startswith("jit(") and name.endswith(")") else name
        lower = event == LOWER_EVENT
        for k in range(len(self.events) - 1, -1, -1):
            e = self.events[k]
            if (
                e.function == base
                and e.call == self.call
                and (e.lower_s if lower else e.compile_s) == 0.0
            ):
                self.events[k] = (
                    replace(e, lower_s=duration) if lower else replace(e, compile_s=duration)
                )
                return
        if len(self.events) < MAX_COMPILES:  # lowered again without a new trace
            e = JitCompile(call=self.call, function=base)
            self.events.append(
                replace(e, lower_s=duration) if lower else replace(e, compile_s=duration)
            )

    def on_log(self, message: str) -> None:
        """One log line of JAX's tracing cache: its explanation goes with its compilation."""
        try:
            why = explain(message)
        except Exception:  # noqa: BLE001 - an unexpected text: the cause stays unknown
            return
        if why is None or "function" not in why:
            return
        name = why.pop("function")
        for k in range(len(self.events) - 1, -1, -1):  # the trace's event came first
            e = self.events[k]
            if e.call != self.call:
                break
            if e.function == name and not e.cause:
                self.events[k] = replace(e, **why)
                return
        self._pending[name] = why


class _Handler(logging.Handler):
    def __init__(self, recorder: CompileRecorder) -> None:
        super().__init__(logging.WARNING)
        self.recorder = recorder

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.recorder.on_log(record.getMessage())
        except Exception:  # noqa: BLE001 - never the user's problem
            pass


@contextmanager
def recording(recorder: CompileRecorder) -> Iterator[bool]:
    """Listen to JAX's compile events (and explain its cache misses) while the block runs;
    yields whether it could (JAX imported by the program)."""
    jax = sys.modules.get("jax")
    monitoring = getattr(jax, "monitoring", None)
    config = getattr(jax, "config", None)
    register = getattr(monitoring, "register_event_duration_secs_listener", None)
    unregister = getattr(monitoring, "unregister_event_duration_listener", None)
    if register is None or unregister is None:
        yield False
        return
    logger = logging.getLogger(EXPLAIN_LOGGER)
    handler = _Handler(recorder)
    explained = _explain_on(config)
    saved = logger.propagate, logger.level
    if explained is not None:
        logger.addHandler(handler)
        if not explained:  # the explanations are the probe's, not the user's log
            logger.propagate = False
        if logger.level == logging.NOTSET or logger.level > logging.WARNING:
            logger.setLevel(logging.WARNING)
    register(recorder.on_duration)
    try:
        yield True
    finally:
        unregister(recorder.on_duration)
        if explained is not None:
            logger.removeHandler(handler)
            logger.propagate, _ = saved
            logger.setLevel(saved[1])
            _explain_off(config, explained)


def _explain_on(config: Any) -> bool | None:
    """Turn ``jax_explain_cache_misses`` on; its previous value (None: could not)."""
    try:
        before = bool(config.jax_explain_cache_misses)
        config.update("jax_explain_cache_misses", True)
    except Exception:  # noqa: BLE001 - another JAX: timings without causes
        return None
    return before


def _explain_off(config: Any, before: bool) -> None:
    try:
        config.update("jax_explain_cache_misses", before)
    except Exception:  # noqa: BLE001
        pass
