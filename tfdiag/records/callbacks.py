"""Python that TensorFlow called back from its own threads: the functions behind
``tf.py_function``, ``tf.numpy_function`` and ``Dataset.from_generator``, with how often
and how long they ran.

Recorded by :mod:`tfdiag.capture.pycalls` over the timed pass; no Python profiler sees
these calls (they run on tf.data's and TF's executor threads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfdiag.records.fields import count, seconds, text
from tfdiag.records.fields import row as row_of


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
        r = row_of(row, "a Python callback", range(6, 8))
        return cls(
            function=text(r[0], "a Python callback's function"),
            file=text(r[1], "a Python callback's file"),
            line=count(r[2], "a Python callback's line", hi=10**9),
            kind=text(r[3], "a Python callback's kind"),
            calls=count(r[4], "a Python callback's calls"),
            seconds=seconds(r[5], "a Python callback's seconds"),
            main_thread_calls=count(r[6], "a Python callback's calls") if len(r) > 6 else 0,
        )
