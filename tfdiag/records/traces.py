"""Graph traces seen during a run: which ``tf.function`` was traced, on which call, with
what arguments — the evidence that names a retracing cause.

Recorded by :mod:`tfdiag.capture.traces` in the profiled pass; stored with the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfdiag.records.fields import count, items, text
from tfdiag.records.fields import row as row_of

#: Traces kept per run (a retracing loop would otherwise grow the report without bound).
MAX_TRACES = 2000


@dataclass(frozen=True)
class TraceEvent:
    """One trace of a Python function into a graph.

    Attributes:
        call: which call of the profiled pass it happened in (0: the cold call).
        function: the traced Python function's qualified name.
        file, line: where that function is defined (the user's file, or TF/Keras for their
            own functions such as tf.data's).
        name: the ``tf.function``'s name (``Dataset_map_lambda`` for tf.data functions).
        params: ``(parameter, type)`` as TensorFlow saw them: ``TensorSpec(shape=(8, 4), ...)``
            for a tensor, ``Literal[3]`` for a Python value.
        function_id: a number for the ``tf.function`` object, the same for each of its traces
            in one recording, another for another object (0: not known).
        ops: how many ops the traced graph holds (0: not known).
        repeats: the most ops that share one name but for TensorFlow's ``_N`` suffix
            (``mul``, ``mul_1``, … ``mul_239``): a Python loop unrolled into the graph.
    """

    call: int
    function: str
    file: str
    line: int
    name: str
    params: tuple[tuple[str, str], ...]
    function_id: int = 0
    ops: int = 0
    repeats: int = 0

    def to_json(self) -> list[Any]:
        return [
            self.call,
            self.function,
            self.file,
            self.line,
            self.name,
            [list(p) for p in self.params],
            self.function_id,
            self.ops,
            self.repeats,
        ]

    @classmethod
    def from_json(cls, row: Any) -> TraceEvent:
        r = row_of(row, "a trace", range(6, 10))
        params = []
        for pair in items(r[5], "a trace's params"):
            k, v = row_of(pair, "a trace's params", range(2, 3))
            params.append((text(k, "a trace's params"), text(v, "a trace's params")))
        return cls(
            call=count(r[0], "a trace's call", hi=10**9),
            function=text(r[1], "a trace's function"),
            file=text(r[2], "a trace's file"),
            line=count(r[3], "a trace's line", hi=10**9),
            name=text(r[4], "a trace's name"),
            params=tuple(params),
            function_id=count(r[6], "a trace's function id", hi=2**64) if len(r) > 6 else 0,
            ops=count(r[7], "a trace's op count", hi=10**9) if len(r) > 7 else 0,
            repeats=count(r[8], "a trace's repeated ops", hi=10**9) if len(r) > 8 else 0,
        )
