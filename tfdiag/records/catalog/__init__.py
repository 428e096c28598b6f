"""The culprit catalog: rules that name a function's cost in Keras/TensorFlow terms.

A rule is data (:class:`~tfdiag.records.catalog.rule.Rule`): a glob on the module path
(relative to site-packages, ``/`` separated), a glob on the function's qualified name,
a category and a one-line *why*. The first matching rule wins; user rules go first.
What to do about a category's time is the findings' business
(:mod:`tfdiag.advise.table`), so fix text lives in one place. The built-in rules are
:mod:`~tfdiag.records.catalog.culprits` (TF 2.21 / Keras 3 / tf_keras) and
:mod:`~tfdiag.records.catalog.legacy` (TF 2.0–2.3).
"""

from __future__ import annotations

from functools import lru_cache

from tfdiag.records.catalog.culprits import PIPELINE_BUILDERS, RULES
from tfdiag.records.catalog.legacy import LEGACY_RULES
from tfdiag.records.catalog.ops import HOST_OPS
from tfdiag.records.catalog.rule import Catalog, Category, Rule, load_rules, read_json_list

__all__ = [
    "HOST_OPS",
    "PIPELINE_BUILDERS",
    "TRACERS",
    "Catalog",
    "Category",
    "Rule",
    "default_catalog",
    "load_rules",
    "read_json_list",
]

#: The functions that trace Python into a graph (TF 2.4+ and the TF 2.0–2.3 name): one call
#: is one trace.
TRACERS = ("_create_concrete_function", "func_graph_from_py_func", "_create_graph_function")


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The built-in catalog (one shared instance, so its match cache is shared too)."""
    return Catalog(RULES + LEGACY_RULES)
