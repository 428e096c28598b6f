"""JAX compilations seen during a run: which ``jax.jit`` function was traced and compiled, on
which call, how long each stage took, and why JAX could not reuse an earlier compilation.

Recorded by :mod:`tfdiag.capture.jit` in the profiled pass from JAX's public monitoring
events (``/jax/core/compile/jaxpr_trace_duration``, ``…/jaxpr_to_mlir_module_duration``,
``…/backend_compile_duration``) and its cache-miss explanations
(``jax_explain_cache_misses``); stored with the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfdiag.records.fields import count, row, seconds, text

#: Compilations kept per run (a recompiling loop would otherwise grow the report).
MAX_COMPILES = 2000

#: Why a compilation happened, as JAX's cache-miss explanation says it:
#: ``first`` (the function's first call), ``new-function`` (a function object JAX has never
#: seen: ``jax.jit(f)`` made again), ``static`` (a static argument's value changed),
#: ``structure`` (another pytree structure), ``shape``, ``dtype``, ``weak-type`` (a Python
#: scalar where an array was, or back), ``context`` (a config or context manager), ``""``
#: (not explained: JAX explains only functions outside its own and the library sources).
CAUSES = ("first", "new-function", "static", "structure", "shape", "dtype", "weak-type", "context")


@dataclass(frozen=True)
class JitCompile:
    """One compilation of a jitted function (its trace, lowering and XLA compile).

    Attributes:
        call: which call of the profiled pass it happened in (0: the cold call).
        function: the Python function's name as JAX reports it (``update``).
        file, line: where that function is defined (from JAX's explanation; empty when
            JAX gave none).
        trace_s, lower_s, compile_s: JAX's own timing of each stage (seconds).
        cause: one of :data:`CAUSES`, or ``""``.
        argument: which argument changed (``x``, ``positional argument 1``).
        now, before: its value or type now and at the closest earlier compilation
            (``1``/``0`` for a static value, ``f32[3]``/``f32[2]`` for an array).
    """

    call: int
    function: str
    file: str = ""
    line: int = 0
    trace_s: float = 0.0
    lower_s: float = 0.0
    compile_s: float = 0.0
    cause: str = ""
    argument: str = ""
    now: str = ""
    before: str = ""

    @property
    def seconds(self) -> float:
        return self.trace_s + self.lower_s + self.compile_s

    def to_json(self) -> list[Any]:
        return [
            self.call,
            self.function,
            self.file,
            self.line,
            self.trace_s,
            self.lower_s,
            self.compile_s,
            self.cause,
            self.argument,
            self.now,
            self.before,
        ]

    @classmethod
    def from_json(cls, value: Any) -> JitCompile:
        r = row(value, "a JAX compilation", range(11, 12))
        where = "a JAX compilation's"
        cause = text(r[7], f"{where} cause")
        return cls(
            call=count(r[0], f"{where} call", hi=10**9),
            function=text(r[1], f"{where} function"),
            file=text(r[2], f"{where} file"),
            line=count(r[3], f"{where} line", hi=10**9),
            trace_s=seconds(r[4], f"{where} trace_s"),
            lower_s=seconds(r[5], f"{where} lower_s"),
            compile_s=seconds(r[6], f"{where} compile_s"),
            cause=cause if cause in CAUSES else "",
            argument=text(r[8], f"{where} argument"),
            now=text(r[9], f"{where} now"),
            before=text(r[10], f"{where} before"),
        )
