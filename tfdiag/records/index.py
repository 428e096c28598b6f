"""A profile's function table indexed once, so every question the detectors ask is a lookup.

The detectors ask for functions by module path and name glob (``keras/src/trainers/*``,
``*CallbackList.on_*``) dozens of times per report. Scanning a 100k-function table with
``fnmatch`` per question made finding computation O(functions × questions); here the table
is grouped by normalised module path once, each glob compiles once to one regular
expression, and each (path, name) question is answered once and remembered.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import chain
from typing import Protocol

from tfdiag.records.paths import normalize_path

_MAGIC = re.compile(r"[*?\[]")


def has_magic(glob: str) -> bool:
    """Does ``glob`` hold a wildcard (else it only matches itself)?"""
    return _MAGIC.search(glob) is not None


@lru_cache(maxsize=4096)
def glob_matcher(glob: str) -> Callable[[str], bool]:
    """``fnmatch.fnmatchcase(text, glob)`` as one compiled test (``*`` crosses ``/``)."""
    if not has_magic(glob):
        return glob.__eq__
    match = re.compile(fnmatch.translate(glob)).match
    return lambda text: match(text) is not None


@lru_cache(maxsize=1024)
def globs_matcher(globs: tuple[str, ...]) -> Callable[[str], bool]:
    """True when ``text`` matches any of ``globs``: one regular expression for the set."""
    if not globs:
        return lambda text: False
    match = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs)).match
    return lambda text: match(text) is not None


class _Row(Protocol):
    @property
    def file(self) -> str: ...
    @property
    def name(self) -> str: ...


def last_name(name: str) -> str:
    """``Model.predict`` → ``predict``."""
    return name.rsplit(".", 1)[-1]


class FunctionIndex:
    """The rows of one function table by normalised module path, and the answers to
    (path glob, name glob) questions, each computed once.

    A name glob matches a row's qualified name or its last component, as the catalog's do.
    """

    def __init__(self, functions: Sequence[_Row]) -> None:
        self._functions = functions
        by_file: dict[str, list[int]] = {}
        for i, file in enumerate([fn.file for fn in functions]):
            rows = by_file.get(file)
            if rows is None:
                by_file[file] = [i]
            else:
                rows.append(i)
        by_path: dict[str, list[list[int]]] = {}
        for file, rows in by_file.items():  # one normalisation per distinct file
            by_path.setdefault(normalize_path(file), []).append(rows)
        self._by_path = {
            path: tuple(parts[0]) if len(parts) == 1 else tuple(sorted(chain(*parts)))
            for path, parts in by_path.items()
        }
        self._paths: dict[str, tuple[str, ...]] = {}
        self._found: dict[tuple[str, str], tuple[int, ...]] = {}

    def paths(self, glob: str) -> tuple[str, ...]:
        """The distinct normalised module paths ``glob`` matches."""
        found = self._paths.get(glob)
        if found is None:
            if not has_magic(glob):
                found = (glob,) if glob in self._by_path else ()
            else:
                test = glob_matcher(glob)
                found = tuple(p for p in self._by_path if test(p))
            self._paths[glob] = found
        return found

    def rows(self, path: str) -> tuple[int, ...]:
        """Rows whose module path matches ``path`` (a glob), in table order."""
        files = self.paths(path)
        if len(files) == 1:
            return self._by_path[files[0]]
        return tuple(sorted(i for f in files for i in self._by_path[f]))

    def find(self, path: str, name: str) -> tuple[int, ...]:
        """Rows whose module path matches ``path`` and whose qualified or last name matches
        ``name``, in table order."""
        key = (path, name)
        found = self._found.get(key)
        if found is None:
            test = glob_matcher(name)
            fns = self._functions
            found = tuple(
                i for i in self.rows(path) if test(fns[i].name) or test(last_name(fns[i].name))
            )
            self._found[key] = found
        return found
