"""A culprit rule, the catalog that matches rules against a profile, and rules files.

A rule is data: a glob on the module path (relative to site-packages, ``/``
separated), a glob on the function's qualified name, a category and a one-line
*why*. The first matching rule wins; user rules go first. What to do about a
category's time is the findings' business (:mod:`tfdiag.advise.table`), so fix
text lives in one place.

A rule may also give the functions it matches *roles* (:data:`ROLES`): what a function is
to the detectors (a Keras step function, a tracer, a model builder...), so that they ask
``analysis.with_role("step")`` instead of quoting framework paths. Roles are not first-match:
a function has every role of every rule that matches it, and a rule with roles and no
category (a *role-only* rule) names what a function is without touching where its time goes.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from tfdiag.records.errors import InputError
from tfdiag.records.fields import text
from tfdiag.records.function_stat import builtin_name
from tfdiag.records.paths import normalize_path
from tfdiag.records.reading import MAX_RULES_BYTES, parse_json, read_regular

if TYPE_CHECKING:
    from tfdiag.records.stats import ProfileStats


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


#: The roles a rule can give a function: a closed set, each what the detectors that ask for
#: it read off the functions holding it (docs/how-it-works.md, "Roles").
ROLES: dict[str, str] = {
    "entry": "a Keras method the user calls (predict, fit, evaluate, *_on_batch): the "
    "iteration count of a bare .prof, the Keras call inside a user's loop",
    "step": "the step function a Keras call runs per batch (or a tf.function call): its "
    "time is the steps' own work",
    "model-builder": "builds, loads, clones or compiles a model",
    "optimizer-builder": "constructs an optimizer (a new one per call is how a custom loop "
    "changes its learning rate, and its tf.function step is made anew with it)",
    "pipeline-builder": "builds an input pipeline (an adapter, a dataset, an iterator) "
    "rather than reading the next batch from one",
    "iterator-builder": "a pipeline builder that only starts reading a dataset: one per "
    "pass over the data is inherent",
    "iterator-create": "a dataset iterator is created",
    "iterator-object": "a dataset iterator object (or its spec) is made",
    "iterator-next": "the next batch is read from a dataset iterator",
    "tracer": "traces Python into a graph: one call is one trace",
    "graph-call": "runs an already traced graph function",
    "function-call": "a compiled function (tf.function) is called",
    "function-graph": "a compiled function reaches its traced graph (not run as Python)",
    "function-machinery": "the compiled function's own Python plumbing, walked through "
    "when looking for who asked for a trace",
    "eager-op": "one op dispatched eagerly from Python",
    "op-run": "ops or a graph function executing below Python",
    "op-internal": "an op converting its own arguments: conversions reached from here are "
    "op dispatch, not the call's inputs",
    "callback-hook": "the callback list: the per-batch and per-epoch hooks Keras calls "
    "(their calls count the steps and epochs)",
    "callback": "a Keras callback's own code (a built-in callback, the callback list)",
    "callback-dispatch": "Keras' thread pool for batch-end callbacks, started by each call on "
    "thread-safe backends (JAX): framework dispatch, not the user's callbacks",
    "result-wait": "Python waits for the results of a program run asynchronously (JAX): the "
    "compute, seen from Python",
    "eager-step": "a Keras step body: run as Python on every batch only when the step is not "
    "compiled (run_eagerly=True, jit_compile=False)",
    "primitive-dispatch": "one op dispatched eagerly to its compiled primitive (JAX): its own "
    "time is the op's run",
    "layer-call": "a Keras layer or model called (`model(x)`): its Python runs on every call "
    "unless the call is traced into a compiled step",
}


@dataclass(frozen=True)
class Rule:
    """One catalog entry.

    Attributes:
        path: glob on the normalised module path, e.g. ``keras/src/trainers/data_adapters/*``;
            ``~`` matches C builtins.
        function: glob on the qualified name (or its last component), e.g. ``*.get_tf_dataset``.
        category: where the time goes; None for a role-only rule, which the category matcher
            passes over.
        why: one line: why this function costs time (or, role-only, what it is).
        weak: a leaf (eager op dispatch) whose time belongs to its caller's category when the
            caller is itself a culprit, e.g. a ``MakeIterator`` op run for tf.data.
        claims: everything that runs under this function is its category's, the user's own
            code included: a Keras callback hook calling the user's callback, a data adapter
            calling the user's ``__getitem__``.
        roles: what the matched functions are to the detectors (:data:`ROLES`), whatever
            rule decides their category.

    ``weak`` and ``claims`` stay flags: they say how the category's time is attributed, so
    they belong to the one rule that decides the category (first match), where roles hold
    for every rule that matches.
    """

    path: str
    function: str
    category: Category | None
    why: str
    weak: bool = False
    claims: bool = False
    roles: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = sorted(self.roles - ROLES.keys())
        if unknown:
            raise InputError(
                f"a rule has an unknown role {unknown[0]!r} (one of: {', '.join(ROLES)})"
            )
        if self.category is None and not self.roles:
            raise InputError("a rule without a category must give roles")

    @property
    def entry(self) -> bool:
        """A user-facing Keras method (``Model.predict``): its call count is the number of
        iterations when reading a bare ``.prof``."""
        return "entry" in self.roles

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        if self.category is None:
            del out["category"]
        else:
            out["category"] = self.category.value
        out["roles"] = sorted(self.roles)
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
        roles = data.get("roles", [])
        if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
            raise InputError(f"a rule's 'roles' must be a list of role names, got {roles!r}")
        given = frozenset(roles) | ({"entry"} if data.get("entry") else set())
        try:
            # a role-only rule (roles, no category) names what a function is, not its cost
            role_only = bool(given) and "category" not in data
            return cls(
                path=str(data["path"]),
                function=str(data["function"]),
                category=None if role_only else Category(data["category"]),
                why=str(data.get("why", "")),
                weak=bool(data.get("weak", False)),
                claims=bool(data.get("claims", False)),
                roles=given,
            )
        except KeyError as exc:
            raise InputError(f"a rule is missing {exc}") from None
        except InputError:
            raise
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
        #: Every rule, role-only ones included (the documented table).
        self.rules: tuple[Rule, ...] = tuple(rules)
        #: The rules that decide a category, in order: what :meth:`match` tries.
        self._categorizing = tuple(r for r in self.rules if r.category is not None)
        self._by_file: dict[str, _FileRules] = {}
        self._by_path: dict[str, _FileRules] = {}
        self._matched: dict[tuple[str, str], Rule | None] = {}
        self._path_patterns = {
            r.path: re.compile(fnmatch.translate(r.path)) for r in self._categorizing
        }
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
                        for r in self._categorizing
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
        """The first rule with a category whose path glob matches ``file`` and whose name
        glob matches ``name`` (the qualified name, or its last component)."""
        key = (file, name)
        if key in self._matched:
            return self._matched[key]
        candidates = self._candidates(file)
        found = None
        if candidates.rules:
            found = candidates.first(name_forms(name))
        self._matched[key] = found
        return found


def name_forms(name: str) -> set[str]:
    """The names a rule's function glob is tried on: the qualified name and its last
    component, and for a C function also its short form (``EagerTensor._numpy``)."""
    names = {name, name.rsplit(".", 1)[-1]}
    if name.startswith("<"):
        short = builtin_name(name).strip("{}")
        names |= {short, short.rsplit(".", 1)[-1]}
    return names


def unmatched_rules(rules: Sequence[Rule], stats: ProfileStats) -> list[str]:
    """One line for each rule that matches no function of ``stats``, naming the glob that
    matched nothing: its ``path`` (no function's module), else its ``function`` (no
    function under that path). Rules are numbered from 1, in the file's order."""
    index, fns = stats.index, stats.functions
    lines = []
    for n, rule in enumerate(rules, 1):
        if not index.paths(rule.path):
            lines.append(f"rule {n}: its path {rule.path!r} matches no function's module")
            continue
        test = re.compile(fnmatch.translate(rule.function)).match
        if not any(test(form) for i in index.rows(rule.path) for form in name_forms(fns[i].name)):
            lines.append(
                f"rule {n}: its function {rule.function!r} matches no function under "
                f"path {rule.path!r}"
            )
    return lines


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


@dataclass(frozen=True)
class Framework:
    """One catalog file: the rules of one framework (TensorFlow, Keras 3, tf_keras...).

    Attributes:
        name: the file's name, ``tensorflow``.
        about: one line for the docs: what it covers.
        rules: its rules, in order (first match wins within the whole catalog; rules of
            different frameworks match different module paths, so their order between
            files does not matter).
        stages: input-pipeline stage names (the last part of a TF profiler iterator path,
            ``Iterator::Root::Map``) → ``(kind, what the user wrote)``.
        modules: the framework's top-level import names (``tensorflow``): a profiled
            function from one of them is the framework's, not the user's.
    """

    name: str
    about: str
    rules: tuple[Rule, ...]
    stages: tuple[tuple[str, str, str], ...] = ()
    modules: tuple[str, ...] = ()
