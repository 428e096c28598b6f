"""One row of a profile's function table: a function's totals and its caller edges, keyed
by (file, line, qualified name), and the checks every value read into a row passes."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from tfdiag.records.errors import InputError
from tfdiag.records.fields import MAX_COUNT, MAX_SECONDS, MAX_TEXT

#: A source line, or an index into the table.
MAX_LINE = 10**9
SURROGATE = re.compile("[\ud800-\udfff]")

FunctionKey = tuple[str, int, str]

_BUILTIN = re.compile(r"<(?:built-in method|method) '?([\w.]+)'?(?: of '([\w.]+)' objects)?>")


def builtin_name(label: str) -> str:
    """``<built-in method a.b.TFE_Py_Execute>`` → ``{TFE_Py_Execute}``."""
    m = _BUILTIN.fullmatch(label)
    if not m:
        return label
    method, owner = m.group(1), m.group(2)
    name = f"{owner.rsplit('.', 1)[-1]}.{method}" if owner else method.rsplit(".", 1)[-1]
    return "{" + name + "}"


class CallerEdge(NamedTuple):
    """Time a function spent when called from one caller (``caller`` indexes the table).

    A named tuple rather than a dataclass: a large profile has hundreds of thousands.
    """

    caller: int
    calls: int
    primitive_calls: int
    self_s: float
    cum_s: float


@dataclass(frozen=True, slots=True)
class FunctionStat:
    """One profiled function: totals over the whole profiled run (slots: a large profile
    has hundreds of thousands, each then a third smaller and quicker to read)."""

    file: str
    line: int
    name: str
    calls: int
    primitive_calls: int
    self_s: float
    cum_s: float
    callers: tuple[CallerEdge, ...] = ()

    @property
    def key(self) -> FunctionKey:
        return (self.file, self.line, self.name)

    @property
    def short_name(self) -> str:
        """``file.py:Qual.name`` for display; builtins keep their own label."""
        if self.file == "~":
            return builtin_name(self.name)
        base = self.file.replace("\\", "/").rsplit("/", 1)[-1]  # Windows paths too
        return f"{base}:{self.name}"


# -- a row's values, read from a .prof or a saved report ----------------------------------


def check_count(value: Any, where: str) -> int:
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        raise InputError(f"{where}: a call count must be a whole number from 0 to {MAX_COUNT:,}")
    return value


def check_line(value: Any, where: str) -> int:
    if type(value) is not int or not 0 <= value <= MAX_LINE:
        raise InputError(f"{where}: a line or index must be a whole number from 0 to {MAX_LINE:,}")
    return value


def check_time(value: Any, where: str) -> float:
    if type(value) is int:
        value = float(value) if abs(value) <= MAX_SECONDS else math.inf
    if type(value) is not float or not -1.0 <= value <= MAX_SECONDS:
        raise InputError(f"{where}: a time must be a number from 0 to {MAX_SECONDS:g} s")
    return max(value, 0.0)  # a timer's rounding can leave a self time a hair below zero


def check_name(value: Any, where: str) -> str:
    if type(value) is not str or len(value) > MAX_TEXT or SURROGATE.search(value):
        raise InputError(f"{where}: a file or function name must be text (at most {MAX_TEXT:,})")
    return value
