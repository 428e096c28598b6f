"""Culprit rules for the TF 2.0-2.3 names the seed profiles reported (``tensorflow_core``,
``tensorflow/python/keras``, ``_process_inputs``, ``_create_graph_function``...).

These paths do not exist in TF 2.21, so the rules never shadow the current ones; they let
``explain`` read an old ``.prof`` in Keras terms. They are tried after the current rules.
"""

from __future__ import annotations

from tfdiag.records.catalog.rule import Category, Framework, Rule

IP = Category.INPUT_PIPELINE
GB = Category.GRAPH_BUILDING
OX = Category.OP_EXECUTION
CB = Category.CALLBACKS
OT = Category.OTHER

ENTRY = frozenset({"entry"})
_BUILDER = frozenset({"pipeline-builder"})

LEGACY_RULES: tuple[Rule, ...] = (
    Rule(
        "*/python/keras/engine/training.py", "predict", OT, "TF 2.x tf.keras predict()", roles=ENTRY
    ),
    Rule("*/python/keras/engine/training.py", "fit", OT, "TF 2.x tf.keras fit()", roles=ENTRY),
    Rule(
        "*/python/keras/engine/training.py",
        "evaluate",
        OT,
        "TF 2.x tf.keras evaluate()",
        roles=ENTRY,
    ),
    Rule(
        "*/python/keras/engine/training.py",
        "*_on_batch",
        OT,
        "TF 2.x tf.keras *_on_batch()",
        roles=ENTRY,
    ),
    Rule(
        "*/python/keras/engine/training_v2*.py",
        "*_process_inputs",
        IP,
        "TF 2.0-2.2 converts every predict/fit input into a new dataset (81 % of predict "
        "in the seed profile)",
    ),
    Rule(
        "*/python/keras/engine/training*.py",
        "*_standardize_user_data",
        IP,
        "TF 2.0-2.3 Keras validates and converts the user's data on every call",
    ),
    Rule(
        "*/python/keras/engine/training*.py",
        "*_select_training_loop",
        IP,
        "TF 2.0-2.3 Keras picks a training loop per call",
    ),
    Rule(
        "*/python/keras/engine/training_v2.py",
        "Loop.*",
        IP,
        "TF 2.0-2.2 training_v2 loop: dataset-based, rebuilt per call",
    ),
    Rule(
        "*/python/keras/engine/training_arrays*.py",
        "*",
        IP,
        "TF 2.0-2.3 array training loop",
    ),
    Rule(
        "*/python/keras/engine/data_adapter.py",
        "*",
        IP,
        "TF 2.x Keras data adapter built on every call",
    ),
    Rule(
        "tensorflow_core/python/data/ops/*",
        "*",
        IP,
        "tf.data transformations are built (TF 2.0)",
    ),
    Rule(
        "*/python/eager/function.py",
        "*_create_graph_function",
        GB,
        "TF 2.0-2.3 traces a new graph function (72 % of predict in the seed profile)",
    ),
    Rule(
        "*/python/eager/function.py",
        "*_maybe_define_function",
        GB,
        "TF 2.0-2.3 looks up or traces a graph function",
    ),
    Rule("*/python/framework/func_graph.py", "*", GB, "TF 2.0-2.3 FuncGraph building"),
    Rule(
        "*/python/keras/backend.py",
        "*function",
        GB,
        "K.function builds a graph function (TF 1.x-style Keras)",
    ),
    Rule("*/python/eager/execute.py", "*quick_execute", OX, "TensorFlow runs an op (TF 2.0)"),
    Rule(
        "*/python/keras/callbacks.py",
        "*",
        CB,
        "TF 2.x Keras callbacks run every batch",
    ),
    # -- roles only (no category) ----------------------------------------------------
    *(
        Rule("*/python/keras/engine/training*.py", m, None, "TF 2.x tf.keras method", roles=ENTRY)
        for m in ("predict", "fit", "evaluate", "*_on_batch")
    ),
    Rule(
        "*/python/framework/func_graph.py",
        "func_graph_from_py_func",
        None,
        "TF 2.0-2.3 traces a graph",
        roles=frozenset({"tracer"}),
    ),
    Rule(
        "*/python/eager/function.py",
        "_create_graph_function",
        None,
        "TF 2.0-2.3 traces a graph function",
        roles=frozenset({"tracer"}),
    ),
    *(
        Rule("*", name, None, "TF 2.0-2.3 Keras converts its input", roles=_BUILDER)
        for name in ("_process_inputs", "_standardize_user_data", "_select_training_loop")
    ),
)

FRAMEWORK = Framework("legacy", "TF 2.0-2.3 names (tensorflow_core, tf.keras in TF)", LEGACY_RULES)
