"""Rules that hold whatever the framework: tfdiag's own frames, the iterator protocol, the
traceback decorators Keras 3 and tf_keras share, and the name-only roles of pipeline
builders (their path is ``*``: the detector reads them on input-pipeline time only).
"""

from __future__ import annotations

from tfdiag.records.catalog.rule import Category, Framework, Rule

WR = Category.WRAPPER

#: Names of functions that *build* an input pipeline (an adapter, a dataset, an iterator), as
#: opposed to reading the next batch from one; a builder running on every call is what
#: `per-call-input-pipeline` reports (per-batch reads inside one `fit` are normal). The
#: frameworks' own builder names are in their files.
_BUILDER = frozenset({"pipeline-builder"})

RULES: tuple[Rule, ...] = (
    # -- transparent wrappers: looked through, never blamed ------------------------
    Rule("*/utils/traceback_utils.py", "*error_handler", WR, "traceback filtering decorator"),
    Rule("tfdiag/*", "*", WR, "tfdiag's own hooks (trace recorder, callback timer)"),
    Rule("~", "<built-in method builtins.next>", WR, "iterator protocol"),
    Rule("~", "<built-in method builtins.iter>", WR, "iterator protocol"),
    # -- roles ---------------------------------------------------------------------
    Rule(
        "*", "*.__init__", None, "an object is made (a data adapter, an iterator)", roles=_BUILDER
    ),
    Rule(
        "*",
        "*Iterator.__init__",
        None,
        "an iterator over a dataset is made",
        roles=frozenset({"iterator-builder"}),
    ),
)

FRAMEWORK = Framework(
    "common", "framework-neutral: tfdiag's own frames, the iterator protocol", RULES
)
