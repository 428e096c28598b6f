"""The culprit catalog: rules that name a function's cost in Keras/TensorFlow terms.

A rule is data (:class:`~tfdiag.records.catalog.rule.Rule`): a glob on the module path
(relative to site-packages, ``/`` separated), a glob on the function's qualified name,
a category and a one-line *why*. The first matching rule wins; user rules go first.
What to do about a category's time is the findings' business
(:mod:`tfdiag.advise.table`), so fix text lives in one place. A rule may also give the
functions it matches *roles* (:data:`ROLES`), which the detectors ask for instead of
quoting framework paths.

The built-in rules are one file per framework, listed in :data:`FRAMEWORK_FILES`: each
defines ``FRAMEWORK`` (a :class:`~tfdiag.records.catalog.rule.Framework`). A backend's
files are named by its row in :mod:`tfdiag.records.catalog.backends`, which gives this
tuple and the backend's stack.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import import_module

from tfdiag.records.catalog.backends import BACKENDS, DEFAULT
from tfdiag.records.catalog.ops import HOST_OPS
from tfdiag.records.catalog.rule import (
    ROLES,
    Catalog,
    Category,
    Framework,
    Rule,
    load_rules,
    read_json_list,
)

__all__ = [
    "FRAMEWORK_FILES",
    "FRAMEWORK_ROLES",
    "HOST_OPS",
    "ROLES",
    "STACKS",
    "Catalog",
    "Category",
    "Framework",
    "Rule",
    "default_catalog",
    "framework_modules",
    "frameworks",
    "input_stages",
    "load_rules",
    "read_json_list",
]

#: The framework files, in the order their rules are tried: the shared file, each other
#: backend's files (JAX's callback-pool rules go before Keras' broad callback rule), Keras',
#: then the default backend's, whose TF 2.0-2.3 names come last so they never shadow the
#: current ones. Rules of different files match different module paths, so the order
#: between them matters only for those two.
FRAMEWORK_FILES: tuple[str, ...] = (
    "common",
    *(f for b in BACKENDS if b is not DEFAULT for f in b.catalog_files),
    "keras",
    *DEFAULT.catalog_files,
)

#: The framework stacks tfdiag diagnoses, each the framework files it reads; every role a
#: detector asks for is given by a rule of each stack (tests/test_roles.py). Each other
#: diagnosed backend with files of its own is a Keras 3 stack.
STACKS: dict[str, tuple[str, ...]] = {
    "TensorFlow + Keras 3": ("common", "keras", "tensorflow"),
    "TensorFlow + tf_keras": ("common", "tf_keras", "tensorflow"),
    **{
        f"{b.label} + Keras 3": ("common", *b.catalog_files, "keras")
        for b in BACKENDS
        if b is not DEFAULT and b.diagnosed and b.catalog_files
    },
}

#: The roles of one framework only, by the framework file that gives them: a detector that
#: asks for one finds nothing on a stack without that file (TensorFlow's graphs, tf.data
#: and eager ops on JAX; JAX's asynchronous results and callback pool on TensorFlow).
FRAMEWORK_ROLES: dict[str, frozenset[str]] = {
    "tensorflow": frozenset(
        {
            "eager-op",
            "function-call",
            "function-graph",
            "function-machinery",
            "graph-call",
            "iterator-create",
            "iterator-next",
            "iterator-object",
            "op-run",
            "tracer",
        }
    ),
    "jax": frozenset(
        {"callback-dispatch", "eager-step", "layer-call", "primitive-dispatch", "result-wait"}
    ),
}


@lru_cache(maxsize=1)
def frameworks() -> tuple[Framework, ...]:
    """The framework files' tables, in :data:`FRAMEWORK_FILES` order."""
    out = []
    for name in FRAMEWORK_FILES:
        table = import_module(f"{__name__}.{name}").FRAMEWORK
        if not isinstance(table, Framework):  # pragma: no cover - a broken catalog file
            raise TypeError(f"{__name__}.{name}.FRAMEWORK is not a Framework")
        out.append(table)
    return tuple(out)


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The built-in catalog (one shared instance, so its match cache is shared too)."""
    return Catalog(tuple(rule for f in frameworks() for rule in f.rules))


def framework_modules() -> tuple[str, ...]:
    """Every framework's top-level import names (``keras``, ``tensorflow``...)."""
    return tuple(m for f in frameworks() for m in f.modules)


def input_stages() -> tuple[tuple[str, str, str], ...]:
    """Input-pipeline stage names → ``(kind, what the user wrote)``, every framework's."""
    return tuple(stage for f in frameworks() for stage in f.stages)
