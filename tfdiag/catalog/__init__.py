"""The culprit catalog: rules that name a function's cost in Keras/TensorFlow terms.

A rule is data: a glob on the module path (relative to site-packages, ``/``
separated), a glob on the function's qualified name, a category, a one-line
*why* and a *fix*. The first matching rule wins; user rules go first.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from functools import lru_cache

from tfdiag.errors import InputError


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
        fix: one line: what to call instead, or ``""``.
        weak: a leaf (eager op dispatch) whose time belongs to its caller's category when the
            caller is itself a culprit, e.g. a ``MakeIterator`` op run for tf.data.
        entry: a user-facing step function (``Model.predict``): its call count is the number of
            iterations when reading a bare ``.prof``.
    """

    path: str
    function: str
    category: Category
    why: str
    fix: str = ""
    weak: bool = False
    entry: bool = False

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out["category"] = self.category.value
        return out

    @classmethod
    def from_json(cls, data: object) -> Rule:
        if not isinstance(data, dict):
            raise InputError("a rule must be an object with path, function, category, why")
        for key in ("path", "function", "why", "fix"):
            if key in data and not isinstance(data[key], str):
                raise InputError(f"a rule's {key!r} must be a string, got {data[key]!r}")
        for key in ("weak", "entry"):
            if key in data and not isinstance(data[key], bool):
                raise InputError(f"a rule's {key!r} must be true or false, got {data[key]!r}")
        try:
            return cls(
                path=str(data["path"]),
                function=str(data["function"]),
                category=Category(data["category"]),
                why=str(data.get("why", "")),
                fix=str(data.get("fix", "")),
                weak=bool(data.get("weak", False)),
                entry=bool(data.get("entry", False)),
            )
        except KeyError as exc:
            raise InputError(f"a rule is missing {exc}") from None
        except ValueError:
            names = ", ".join(c.value for c in Category)
            raise InputError(f"a rule has an unknown category (one of: {names})") from None


_SITE = re.compile(r".*[/](?:site-packages|dist-packages)[/]")
_STDLIB = re.compile(r".*/(?:lib/python3(?:\.\d+)?|Lib)/")


@lru_cache(maxsize=65536)
def normalize_path(file: str) -> str:
    """Module path relative to site-packages (``keras/src/...``), or the path as given.

    Works on paths recorded on another machine, Windows ones included.
    """
    if file == "~":
        return "~"
    p = file.replace("\\", "/")
    m = _SITE.match(p)
    if m:
        return p[m.end() :]
    return p


@lru_cache(maxsize=65536)
def is_user_code(file: str) -> bool:
    """True for the user's own files: not a builtin, not stdlib, not an installed package."""
    if file == "~" or file.startswith("<"):
        return False
    p = file.replace("\\", "/")
    return not (_SITE.match(p) or _STDLIB.match(p))


class Catalog:
    """An ordered rule table with a memoised matcher.

    Rules are first narrowed by module path (once per distinct file), then by name, so a
    100k-function profile costs one path check per file, not per function.
    """

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self._by_file: dict[str, tuple[tuple[Rule, re.Pattern[str]], ...]] = {}
        self._matched: dict[tuple[str, str], Rule | None] = {}
        self._path_patterns = {r.path: re.compile(fnmatch.translate(r.path)) for r in self.rules}
        self._name_patterns = {
            r.function: re.compile(fnmatch.translate(r.function)) for r in self.rules
        }

    def with_rules(self, extra: Iterable[Rule]) -> Catalog:
        """A catalog whose ``extra`` rules are tried before this one's."""
        extra = tuple(extra)
        return Catalog(extra + self.rules) if extra else self

    def _candidates(self, file: str) -> tuple[tuple[Rule, re.Pattern[str]], ...]:
        found = self._by_file.get(file)
        if found is None:
            path = normalize_path(file)
            found = self._by_file[file] = tuple(
                (r, self._name_patterns[r.function])
                for r in self.rules
                if path == r.path or self._path_patterns[r.path].match(path)
            )
        return found

    def match(self, file: str, name: str) -> Rule | None:
        """The first rule whose path glob matches ``file`` and whose name glob matches
        ``name`` (the qualified name, or its last component)."""
        key = (file, name)
        if key in self._matched:
            return self._matched[key]
        last = name.rsplit(".", 1)[-1]
        found = None
        for rule, pattern in self._candidates(file):
            if pattern.match(name) or pattern.match(last):
                found = rule
                break
        self._matched[key] = found
        return found


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The built-in catalog (one shared instance, so its match cache is shared too)."""
    from tfdiag.catalog.culprits import RULES
    from tfdiag.catalog.legacy import LEGACY_RULES

    return Catalog(RULES + LEGACY_RULES)


def load_rules(path: str | os.PathLike[str]) -> tuple[Rule, ...]:
    """Read user rules from a JSON file: a list of rule objects (see docs/catalog.md)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise InputError(f"{path}: no such rules file") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a JSON rules file ({exc})") from None
    if not isinstance(data, list):
        raise InputError(f"{path}: a rules file holds a JSON list of rules")
    try:
        return tuple(Rule.from_json(item) for item in data)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
