"""Typed reads of a saved result's JSON: every value checked for its type and range before
it is used.

A string where a list belongs, a float where a count belongs, NaN, a time of 1e308, a lone
surrogate: each is one :class:`InputError` line naming the field, never minutes of work
(iterating a 5-million-character "list"), an overflow or a division by zero later on. The
codecs (``*_from_json``) read through :class:`Obj`; rows of numbers go through
:func:`count` and :func:`seconds` directly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from tfdiag.records.errors import InputError

#: Calls, samples, iterations, steps: at most this many.
MAX_COUNT = 10**15
#: Any time in a saved result, in seconds (about 31 years).
MAX_SECONDS = 1e9
#: Characters in one string of a saved result.
MAX_TEXT = 1 << 16

_SURROGATE = re.compile("[\ud800-\udfff]")
_MISSING: Any = object()


def _bad(where: str, expected: str, value: Any) -> InputError:
    got = type(value).__name__ if not isinstance(value, (int, float)) else repr(value)
    if isinstance(value, str):
        got = f"a string of {len(value):,} characters" if len(value) > 40 else repr(value)
    elif isinstance(value, (list, dict)):
        got = f"a {'list' if isinstance(value, list) else 'JSON object'}"
    return InputError(f"not a valid result ({where} must be {expected}, got {got})")


def text_list(values: Sequence[Any], where: str) -> tuple[str, ...]:
    """:func:`text` of each of ``values``, checked together when all pass (a merged job's
    reports each carry the whole cluster: a million addresses for 1,000 workers)."""
    if (
        not values
        or set(map(type, values)) == {str}
        and max(map(len, values)) <= MAX_TEXT
        and not any(map(_SURROGATE.search, values))
    ):
        return tuple(values)
    return tuple(text(v, where) for v in values)


def text(value: Any, where: str) -> str:
    if type(value) is not str:
        raise _bad(where, "a string", value)
    if len(value) > MAX_TEXT:
        raise InputError(f"not a valid result ({where} is longer than {MAX_TEXT:,} characters)")
    if _SURROGATE.search(value):
        raise InputError(f"not a valid result ({where} is not valid Unicode: a lone surrogate)")
    return value


def count(value: Any, where: str, lo: int = 0, hi: int = MAX_COUNT) -> int:
    if type(value) is not int:
        raise _bad(where, "a whole number", value)
    if not lo <= value <= hi:
        raise InputError(f"not a valid result ({where} out of range: {lo:,} to {hi:,})")
    return value


def seconds(value: Any, where: str, lo: float = 0.0, hi: float = MAX_SECONDS) -> float:
    """A finite number in ``[lo, hi]`` (a JSON integer too), as a float."""
    if type(value) is int and abs(value) <= 2**53:
        value = float(value)
    if type(value) is not float or not math.isfinite(value):
        raise _bad(where, "a number", value)
    if not lo <= value <= hi:
        raise InputError(f"not a valid result ({where} out of range: {lo:g} to {hi:g})")
    return value


def items(value: Any, where: str) -> list[Any]:
    if type(value) is not list:
        raise _bad(where, "a list", value)
    return value


def row(value: Any, where: str, lengths: range) -> list[Any]:
    """A positional row (``[file, line, name, ...]``) of one of ``lengths``."""
    found = items(value, where)
    if len(found) not in lengths:
        raise InputError(f"not a valid result ({where} has {len(found)} items)")
    return found


class Obj:
    """One JSON object of a saved result, read field by field; ``where`` names it."""

    def __init__(self, value: Any, where: str) -> None:
        if type(value) is not dict:
            raise _bad(where or "the document", "a JSON object", value)
        self.doc: dict[str, Any] = value
        self.where = where

    def at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def _get(self, key: str, default: Any) -> Any:
        value = self.doc.get(key, default)
        if value is _MISSING:
            raise InputError(f"not a valid result ({self.at(key)} is missing)")
        return value

    def text(self, key: str, default: Any = _MISSING) -> str:
        return text(self._get(key, default), self.at(key))

    def opt_text(self, key: str) -> str | None:
        value = self.doc.get(key)
        return None if value is None else text(value, self.at(key))

    def count(self, key: str, default: Any = _MISSING, lo: int = 0, hi: int = MAX_COUNT) -> int:
        return count(self._get(key, default), self.at(key), lo, hi)

    def opt_count(self, key: str, lo: int = 0, hi: int = MAX_COUNT) -> int | None:
        value = self.doc.get(key)
        return None if value is None else count(value, self.at(key), lo, hi)

    def seconds(
        self, key: str, default: Any = _MISSING, lo: float = 0.0, hi: float = MAX_SECONDS
    ) -> float:
        return seconds(self._get(key, default), self.at(key), lo, hi)

    def opt_seconds(self, key: str, lo: float = 0.0, hi: float = MAX_SECONDS) -> float | None:
        value = self.doc.get(key)
        return None if value is None else seconds(value, self.at(key), lo, hi)

    def series(self, key: str, lo: float = 0.0, hi: float = MAX_SECONDS) -> tuple[float, ...]:
        where = self.at(key)
        return tuple(seconds(v, f"{where}[]", lo, hi) for v in items(self._get(key, []), where))

    def flag(self, key: str, default: bool) -> bool:
        value = self._get(key, default)
        if type(value) is not bool:
            raise _bad(self.at(key), "true or false", value)
        return value

    def items(self, key: str) -> list[Any]:
        return items(self._get(key, []), self.at(key))

    def texts(self, key: str) -> tuple[str, ...]:
        where = self.at(key)
        return text_list(items(self._get(key, []), where), f"{where}[]")

    def pairs(self, key: str) -> tuple[tuple[str, str], ...]:
        """A JSON object of strings (numbers and booleans written as text)."""
        found = Obj(self._get(key, {}), self.at(key)).doc
        out = []
        for k, v in found.items():
            if type(v) is bool:
                v = str(v).lower()
            elif type(v) in (int, float):
                v = repr(v)
            out.append((text(k, self.at(key)), text(v, f"{self.at(key)}.{k}")))
        return tuple(out)

    def obj(self, key: str) -> Obj | None:
        value = self.doc.get(key)
        return None if value is None else Obj(value, self.at(key))
