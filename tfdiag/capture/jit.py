"""The JAX compile probe: every ``jax.jit`` compilation during the profiled pass, timed per
stage and explained.

JAX reports each stage of a compilation through its public monitoring API
(``jax.monitoring.register_event_duration_secs_listener``): the trace to a jaxpr
(``/jax/core/compile/jaxpr_trace_duration``, with the Python function's name), the lowering
to MLIR and the XLA compile (``…/jaxpr_to_mlir_module_duration``,
``…/backend_compile_duration``, named ``jit(name)``). With ``jax_explain_cache_misses`` on
it also logs why a traced function missed its cache ("TRACING CACHE MISS …: different input
types: * at x, now f32[3] and before f32[2]"); the probe turns that text into a cause, the
argument and its values before and now. JAX explains only the user's own functions; for
the others (Keras' ``predict_step``/``train_step``) the probe reads the shapes of the arrays
that reached the function from the call JAX is tracing (``cache_miss(*args)`` in
jax/_src/pjit.py) and compares them with its previous compilation's: a new batch size or
sequence length is then the cause, as JAX would have said. JAX is never imported here: when
the program has not imported it, nothing is recorded. Nothing reaches the user's log handlers.
"""

from __future__ import annotations

import inspect
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
#: The frames walked up from JAX's trace event to the call it traces, and the array leaves
#: read from its arguments (Keras' state is a few per layer: a bound on a huge model).
_MAX_FRAMES = 40
_MAX_LEAVES = 4096
_DTYPES = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int32": "i32",
    "int64": "i64",
    "int8": "i8",
    "uint8": "u8",
    "bool": "bool",
}

Signature = tuple[tuple[str, tuple[str, ...]], ...]


def _leaves(value: Any, out: list[str]) -> None:
    if len(out) >= _MAX_LEAVES:
        return
    if isinstance(value, (tuple, list)):
        for v in value:
            _leaves(v, out)
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            _leaves(value[k], out)
    elif hasattr(value, "shape") and hasattr(value, "dtype"):
        dtype = str(value.dtype)
        dims = ",".join(str(d) for d in tuple(value.shape))
        out.append(f"{_DTYPES.get(dtype, dtype)}[{dims}]")


def traced_arguments(frame: Any) -> Signature | None:
    """The arrays of the call JAX is tracing, found up the stack from ``frame``: per
    argument its name and its leaves' ``f32[5,4]``; None when no such call is found."""
    for _ in range(_MAX_FRAMES):
        if frame is None:
            return None
        code = frame.f_code
        if code.co_name == "cache_miss" and code.co_filename.endswith("pjit.py"):
            args = frame.f_locals.get("args")
            if not isinstance(args, tuple):
                return None
            try:
                params = list(inspect.signature(frame.f_locals.get("fun")).parameters)
            except (TypeError, ValueError):
                params = []
            out = []
            for i, a in enumerate(args):
                leaves: list[str] = []
                _leaves(a, leaves)
                name = params[i] if i < len(params) else f"positional argument {i}"
                out.append((name, tuple(leaves)))
            return tuple(out)
        frame = frame.f_back
    return None


def shape_change(now: Signature, before: Signature) -> dict[str, Any] | None:
    """The first argument whose arrays changed shape or dtype between two compilations, as
    the fields of an explanation (None: the same arrays)."""
    for (name, leaves), (_, old) in zip(now, before, strict=False):
        if leaves == old:
            continue
        for a, b in zip(leaves, old, strict=False):
            if a != b:
                same_dtype = a.split("[", 1)[0] == b.split("[", 1)[0]
                cause = "shape" if same_dtype else "dtype"
                return {"cause": cause, "argument": name, "now": _cut(a), "before": _cut(b)}
        return {"cause": "structure", "argument": name, "now": "", "before": ""}
    return None


def _argument(path: str) -> str:
    """``[0][1]`` → ``positional argument 1``; ``[1]['step']`` → ``step``."""
    if m := _POSITION.match(path):
        return f"positional argument {m.group(1)}"
    if m := _KEYWORD.match(path):
        return m.group(1)
    return path


def _named(why: dict[str, Any], params: tuple[str, ...]) -> dict[str, Any]:
    """``positional argument 1`` named as the function's parameter (``scale``) when its
    signature was read (a parameter the signature lacks keeps JAX's words)."""
    m = re.fullmatch(r"positional argument (\d+)", why.get("argument", ""))
    if m is None or int(m.group(1)) >= len(params):
        return why
    name = params[int(m.group(1))]
    if name.startswith("positional argument"):
        return why
    return {**why, "argument": name}


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
        #: the arguments' arrays at each function's last compilation, and the events whose
        #: cause was read from them (JAX's own explanation, when it comes, replaces it)
        self._shapes: dict[str, Signature] = {}
        self._guessed: set[int] = set()
        #: each function's parameter names, read at its last trace: JAX's explanation says
        #: "positional argument 1" where the user wrote ``scale``
        self._params: dict[str, tuple[str, ...]] = {}

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
            now = traced_arguments(sys._getframe(2))
            if now is not None:
                self._params[name] = tuple(n for n, _ in now)
                why = _named(why, self._params[name])
                before = self._shapes.get(name)
                self._shapes[name] = now
                change = shape_change(now, before) if before is not None and not why else None
                if change is not None:
                    why = change
                    self._guessed.add(len(self.events))
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
        why = _named(why, self._params.get(name, ()))
        for k in range(len(self.events) - 1, -1, -1):  # the trace's event came first
            e = self.events[k]
            if e.call != self.call:
                break
            if e.function == name and (not e.cause or k in self._guessed):
                self.events[k] = replace(e, **why)
                self._guessed.discard(k)
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
