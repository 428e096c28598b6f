"""A culprit rule, the catalog that matches rules against a profile, and rules files.

A rule is data: a glob on the module path (relative to site-packages, ``/``
separated), a glob on the function's qualified name, a category and a one-line
*why*. The first matching rule wins; user rules go first. What to do about a
category's time is the findings' business (:mod:`tfdiag.advise.table`), so fix
text lives in one place.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import Protocol, TypeVar

from tfdiag.records.errors import InputError
from tfdiag.records.fields import text
from tfdiag.records.paths import normalize_path
from tfdiag.records.reading import MAX_RULES_BYTES, parse_json, read_regular
from tfdiag.records.stats import builtin_name


class Category(str, Enum):
    """Where a function's time goes, in the user's terms."""

    INPUT_PIPELINE = "input-pipeline"
    GRAPH_BUILDING = "graph-building"
    TENSOR_CONVERSION = "tensor-conversion"
    OP_EXECUTION = "op-execution"
    CALLBACKS = "callbacks"
    OUTPUT_CONVERSION = "output-conversion"
    USER_CODE = "user-code"
    OTHER = "other"
    #: Transparent frames (decorators, dispatchers): never a culprit, looked through.
    WRAPPER = "wrapper"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Category.INPUT_PIPELINE: "input pipeline / data adapter",
    Category.GRAPH_BUILDING: "graph building (tracing)",
    Category.TENSOR_CONVERSION: "tensor conversion",
    Category.OP_EXECUTION: "op execution",
    Category.CALLBACKS: "callbacks & progress bar",
    Category.OUTPUT_CONVERSION: "output conversion",
    Category.USER_CODE: "user code",
    Category.OTHER: "other (framework, stdlib)",
    Category.WRAPPER: "wrapper",
}


@dataclass(frozen=True)
class Rule:
    """One catalog entry.

    Attributes:
        path: glob on the normalised module path, e.g. ``keras/src/trainers/data_adapters/*``;
            ``~`` matches C builtins.
        function: glob on the qualified name (or its last component), e.g. ``*.get_tf_dataset``.
        category: where the time goes.
        why: one line: why this function costs time.
        weak: a leaf (eager op dispatch) whose time belongs to its caller's category when the
            caller is itself a culprit, e.g. a ``MakeIterator`` op run for tf.data.
        entry: a user-facing step function (``Model.predict``): its call count is the number of
            iterations when reading a bare ``.prof``.
        claims: everything that runs under this function is its category's, the user's own
            code included: a Keras callback hook calling the user's callback, a data adapter
            calling the user's ``__getitem__``.
    """

    path: str
    function: str
    category: Category
    why: str
    weak: bool = False
    entry: bool = False
    claims: bool = False

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out["category"] = self.category.value
        return out

    @classmethod
    def from_json(cls, data: object) -> Rule:
        if not isinstance(data, dict):
            raise InputError("a rule must be an object with path, function, category, why")
        for key in ("path", "function", "why"):
            if key in data and not isinstance(data[key], str):
                raise InputError(f"a rule's {key!r} must be a string, got {data[key]!r}")
            if key in data:
                text(data[key], f"a rule's {key!r}")
        if "category" in data and not isinstance(data["category"], str):
            raise InputError(f"a rule's 'category' must be a string, got {data['category']!r}")
        for key in ("weak", "entry", "claims"):
            if key in data and not isinstance(data[key], bool):
                raise InputError(f"a rule's {key!r} must be true or false, got {data[key]!r}")
        try:
            return cls(
                path=str(data["path"]),
                function=str(data["function"]),
                category=Category(data["category"]),
                why=str(data.get("why", "")),
                weak=bool(data.get("weak", False)),
                entry=bool(data.get("entry", False)),
                claims=bool(data.get("claims", False)),
            )
        except KeyError as exc:
            raise InputError(f"a rule is missing {exc}") from None
        except ValueError:
            names = ", ".join(c.value for c in Category)
            raise InputError(f"a rule has an unknown category (one of: {names})") from None


class Catalog:
    """An ordered rule table with a memoised matcher.

    Rules are first narrowed by module path (once per distinct file); the name globs of the
    rules left compile to one regular expression per file, so a 100k-function profile costs
    one path check per file and one match per function name.
    """

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self._by_file: dict[str, _FileRules] = {}
        self._by_path: dict[str, _FileRules] = {}
        self._matched: dict[tuple[str, str], Rule | None] = {}
        self._path_patterns = {r.path: re.compile(fnmatch.translate(r.path)) for r in self.rules}
        #: Does any rule's path glob match? One expression: most files of a big profile
        #: match none, and are settled by one test instead of one per rule.
        self._any_path = re.compile(
            "|".join(f"(?:{fnmatch.translate(p)})" for p in self._path_patterns) or "(?!)"
        ).match

    def with_rules(self, extra: Iterable[Rule]) -> Catalog:
        """A catalog whose ``extra`` rules are tried before this one's."""
        extra = tuple(extra)
        return Catalog(extra + self.rules) if extra else self

    def _candidates(self, file: str) -> _FileRules:
        found = self._by_file.get(file)
        if found is None:
            path = normalize_path(file)
            found = self._by_path.get(path)
            if found is None:
                found = self._by_path[path] = _FileRules(
                    tuple(
                        r
                        for r in self.rules
                        if path == r.path or self._path_patterns[r.path].match(path)
                    )
                    if self._any_path(path)
                    else ()
                )
            self._by_file[file] = found
        return found

    def match_table(self, functions: Iterable[_Named]) -> tuple[Rule | None, ...]:
        """:meth:`match` of every row; a row in a file no rule's path matches costs one
        lookup."""
        out: list[Rule | None] = []
        by_file = self._by_file
        for fn in functions:
            candidates = by_file.get(fn.file) or self._candidates(fn.file)
            out.append(self.match(fn.file, fn.name) if candidates.rules else None)
        return tuple(out)

    def match(self, file: str, name: str) -> Rule | None:
        """The first rule whose path glob matches ``file`` and whose name glob matches
        ``name`` (the qualified name, or its last component)."""
        key = (file, name)
        if key in self._matched:
            return self._matched[key]
        candidates = self._candidates(file)
        found = None
        if candidates.rules:
            names = {name, name.rsplit(".", 1)[-1]}
            if name.startswith("<"):  # a C function: also its short form, `EagerTensor._numpy`
                short = builtin_name(name).strip("{}")
                names |= {short, short.rsplit(".", 1)[-1]}
            found = candidates.first(names)
        self._matched[key] = found
        return found


class _Named(Protocol):
    @property
    def file(self) -> str: ...
    @property
    def name(self) -> str: ...


class _FileRules:
    """The rules whose path glob matches one module path, their name globs as one regular
    expression: an alternation tries them in order, so the first that matches wins."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self._match = (
            re.compile(
                "|".join(f"(?P<r{n}>{fnmatch.translate(r.function)})" for n, r in enumerate(rules))
            ).match
            if rules
            else None
        )

    def first(self, names: Iterable[str]) -> Rule | None:
        """The first rule whose name glob matches one of ``names``."""
        best: int | None = None
        for name in names:
            m = self._match(name) if self._match is not None else None
            if m is not None and m.lastgroup is not None:
                n = int(m.lastgroup[1:])
                best = n if best is None else min(best, n)
        return self.rules[best] if best is not None else None


def load_rules(path: str | os.PathLike[str]) -> tuple[Rule, ...]:
    """Read user rules from a JSON file: a list of rule objects (see docs/catalog.md)."""
    return tuple(read_json_list(path, "rules", Rule.from_json))


T = TypeVar("T")


def read_json_list(
    path: str | os.PathLike[str], what: str, parse: Callable[[object], T]
) -> list[T]:
    """A JSON file holding a list, each item parsed by ``parse``; one InputError line on
    anything else."""
    raw = read_regular(Path(path), f"a {what} file", MAX_RULES_BYTES)
    try:
        data = parse_json(raw)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{path}: not a JSON {what} file ({exc})") from None
    if not isinstance(data, list):
        raise InputError(f"{path}: a {what} file holds a JSON list of {what}")
    try:
        return [parse(item) for item in data]
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
