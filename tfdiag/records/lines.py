"""The user's side of the boundary: which of the user's own lines were running, and what
framework function each was calling, while the steady-state calls ran.

Recorded by the line sampler (:mod:`tfdiag.capture.lines`) during the profiled calls after
the cold one; the analysis joins it with cProfile's caller edges, which give each line's
exact call counts and time (:mod:`tfdiag.analysis.lines`). Raw records only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from tfdiag.records.fields import Obj, count, items, seconds, text
from tfdiag.records.fields import row as row_of

#: (file, first line, qualified name): the key of a function in the profile table.
FunctionKey = tuple[str, int, str]

#: Places kept per run, and source lines (a record of a huge program stays bounded).
MAX_PLACES = 2000
#: Characters kept of one source line.
MAX_CODE = 300


@dataclass(frozen=True)
class LinePlace:
    """One line of the user's code on the sampled stacks, with what it was calling.

    Attributes:
        file, line: the user's source line.
        function: the key of the user's function that holds it (a row of the profile).
        callee: the framework function that line called (the frame right below it), or
            None when the line itself was running (the user's own Python, or a C call).
        api: the first function below it that is not a transparent wrapper (a decorator,
            a dispatcher): what the line calls in effect; None as for ``callee``.
        samples: how many samples saw it.
        seconds: the time those samples stand for.
        repeated: of those samples, how many saw it run inside a loop (its own, or one of a
            user line above it): the whole-script sampler's stand-in for call counts (0 for
            the line sampler, whose counts are cProfile's).
    """

    file: str
    line: int
    function: FunctionKey
    callee: FunctionKey | None
    api: FunctionKey | None
    samples: int
    seconds: float
    repeated: int = 0

    def to_json(self) -> list[Any]:
        return [
            self.file,
            self.line,
            list(self.function),
            None if self.callee is None else list(self.callee),
            None if self.api is None else list(self.api),
            self.samples,
            self.seconds,
            self.repeated,
        ]

    @classmethod
    def from_json(cls, value: Any) -> LinePlace:
        r = row_of(value, "a line place", range(7, 9))
        return cls(
            file=text(r[0], "a line place's file"),
            line=count(r[1], "a line place's line", hi=10**9),
            function=_key(r[2], "a line place's function"),
            callee=None if r[3] is None else _key(r[3], "a line place's callee"),
            api=None if r[4] is None else _key(r[4], "a line place's api"),
            samples=count(r[5], "a line place's samples"),
            seconds=seconds(r[6], "a line place's seconds"),
            repeated=count(r[7], "a line place's repeated samples") if len(r) > 7 else 0,
        )


@dataclass(frozen=True)
class SwitchLine:
    """A debugging switch the run had on (``switch``: its fact name, ``tf-data-debug``), and
    the line of the user's code that sets it, where one was found (``line`` 0: none)."""

    switch: str
    file: str = ""
    line: int = 0
    code: str = ""

    def to_json(self) -> list[Any]:
        return [self.switch, self.file, self.line, self.code]

    @classmethod
    def from_json(cls, value: Any) -> SwitchLine:
        r = row_of(value, "a switch line", range(4, 5))
        return cls(
            switch=text(r[0], "a switch's name"),
            file=text(r[1], "a switch's file"),
            line=count(r[2], "a switch's line", hi=10**9),
            code=text(r[3], "a switch's code"),
        )


@dataclass(frozen=True)
class LinesRecord:
    """What the line sampler saw over the steady-state calls.

    Attributes:
        interval_s: the time between two samples.
        samples: every sample taken inside the profiled calls (the denominator of a
            line's sampled share).
        places: the user's lines seen, with their callees.
        source: ``(file, line, text)`` of each line named above and of the switches', read
            when the run was captured (a saved report keeps them: the file may be gone).
        switches: debugging switches found on, with the lines that set them.
    """

    interval_s: float
    samples: int
    places: tuple[LinePlace, ...] = ()
    source: tuple[tuple[str, int, str], ...] = ()
    switches: tuple[SwitchLine, ...] = ()

    def code(self, file: str, line: int) -> str:
        """The source text of ``file:line`` as captured ("" when not kept)."""
        return self._by_line.get((file, line), "")

    @cached_property
    def _by_line(self) -> dict[tuple[str, int], str]:
        return {(f, n): t for f, n, t in self.source}

    def to_json(self) -> dict[str, Any]:
        return {
            "interval_s": self.interval_s,
            "samples": self.samples,
            "places": [p.to_json() for p in self.places],
            "source": [list(s) for s in self.source],
            "switches": [s.to_json() for s in self.switches],
        }

    @classmethod
    def from_json(cls, value: Any) -> LinesRecord | None:
        """Read back :meth:`to_json`'s object (None stays None: an older report).

        Raises:
            InputError: a part is missing, of the wrong type or out of range.
        """
        if value is None:
            return None
        d = Obj(value, "lines")
        places = d.items("places")
        if len(places) > MAX_PLACES:
            places = places[:MAX_PLACES]
        source = []
        for raw in d.items("source")[: 2 * MAX_PLACES]:
            f, n, t = row_of(raw, "a source line", range(3, 4))
            source.append(
                (
                    text(f, "a source line's file"),
                    count(n, "a source line's number", hi=10**9),
                    text(t, "a source line's text")[:MAX_CODE],
                )
            )
        return cls(
            interval_s=d.seconds("interval_s"),
            samples=d.count("samples"),
            places=tuple(LinePlace.from_json(p) for p in places),
            source=tuple(source),
            switches=tuple(SwitchLine.from_json(s) for s in d.items("switches")),
        )


def _key(value: Any, where: str) -> FunctionKey:
    f, n, q = items(value, where) if type(value) is list and len(value) == 3 else (None, 0, "")
    return (text(f, where), count(n, where, hi=10**9), text(q, where))
