"""Python that TensorFlow called back from its own threads: the functions behind
``tf.py_function``, ``tf.numpy_function`` and ``Dataset.from_generator``, with how often
and how long they ran.

Recorded by :mod:`tfdiag.capture.pycalls` over the timed pass; no Python profiler sees
these calls (they run on tf.data's and TF's executor threads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PyCallback:
    """One Python function TensorFlow called back, totals over the timed pass.

    Attributes:
        function: its qualified name (``parse_line``; for ``Dataset.from_generator`` the
            generator it was given; for a Keras PyDataset its ``__getitem__``, with its
            ``workers`` and ``use_multiprocessing``).
        file, line: where it is defined.
        kind: ``py_function`` (eager tensors in and out), ``numpy_function``,
            ``generator`` or ``pydataset``.
        calls: how many times TensorFlow called it.
        seconds: wall time inside those calls, summed over threads.
        main_thread_calls: calls made on the thread that ran the profiled call.
    """

    function: str
    file: str
    line: int
    kind: str
    calls: int
    seconds: float
    main_thread_calls: int = 0

    def to_json(self) -> list[Any]:
        return [
            self.function,
            self.file,
            self.line,
            self.kind,
            self.calls,
            self.seconds,
            self.main_thread_calls,
        ]

    @classmethod
    def from_json(cls, row: Any) -> PyCallback:
        function, file, line, kind, calls, seconds, *rest = row
        return cls(
            function=str(function),
            file=str(file),
            line=int(line),
            kind=str(kind),
            calls=int(calls),
            seconds=float(seconds),
            main_thread_calls=int(rest[0]) if rest else 0,
        )
