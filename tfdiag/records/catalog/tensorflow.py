"""TensorFlow: tf.data, tf.function (tracing, graph calls), eager op dispatch, conversions.

Names were read from the installed sources of TensorFlow 2.21; the TF 2.0-2.3 names are in
:mod:`~tfdiag.records.catalog.legacy`. The first matching rule wins, so specific rules
come before broad ones.
"""

from __future__ import annotations

from tfdiag.records.catalog.rule import Category, Framework, Rule

IP = Category.INPUT_PIPELINE
GB = Category.GRAPH_BUILDING
TC = Category.TENSOR_CONVERSION
OX = Category.OP_EXECUTION
OC = Category.OUTPUT_CONVERSION
WR = Category.WRAPPER
OT = Category.OTHER

_TRACING = "tensorflow/python/eager/polymorphic_function/tracing_compilation.py"
_POLYMORPHIC = "tensorflow/python/eager/polymorphic_function/polymorphic_function.py"
_CONCRETE = "tensorflow/python/eager/polymorphic_function/concrete_function.py"
_ITERATOR_OPS = "tensorflow/python/data/ops/iterator_ops.py"
_BUILDER = frozenset({"pipeline-builder"})
_ITERATOR_BUILDER = frozenset({"iterator-builder"})

RULES: tuple[Rule, ...] = (
    # -- transparent wrappers: looked through, never blamed ------------------------
    Rule("*/util/traceback_utils.py", "*error_handler", WR, "traceback filtering decorator"),
    Rule("tensorflow/python/util/dispatch.py", "*", WR, "op dispatch decorator"),
    Rule("tensorflow/python/profiler/trace.py", "*wrapped", WR, "profiler trace decorator"),
    Rule("tensorflow/python/ops/weak_tensor_ops.py", "*wrapper", WR, "weak tensor decorator"),
    Rule("tensorflow/python/util/deprecation.py", "*new_func", WR, "deprecation decorator"),
    Rule(
        "tensorflow/python/autograph/impl/api.py",
        "*do_not_convert.<locals>.wrapper",
        WR,
        "autograph pass-through: runs the function as it is (Keras 3 run_eagerly steps)",
    ),
    Rule(
        "tensorflow/python/autograph/impl/api.py",
        "*call_with_unspecified_conversion_status.<locals>.wrapper",
        WR,
        "autograph pass-through",
    ),
    # -- input pipeline -----------------------------------------------------------
    Rule(
        "tensorflow/python/ops/gen_dataset_ops.py",
        "*",
        IP,
        "tf.data ops (iterator creation, dataset graph) run on every call",
    ),
    Rule(_ITERATOR_OPS, "*", IP, "a tf.data iterator is created"),
    Rule(
        "tensorflow/python/data/ops/dataset_ops.py",
        "*",
        IP,
        "a tf.data pipeline is assembled",
    ),
    Rule(
        "tensorflow/python/data/ops/*",
        "*",
        IP,
        "tf.data transformations (map, flat_map, batch) are built",
    ),
    # -- graph building / tracing --------------------------------------------------
    Rule(
        _TRACING,
        "trace_function",
        OT,
        "tf.function call overhead: bind the arguments, look up the traced graph (the trace "
        "itself, when one happens, is _create_concrete_function)",
    ),
    Rule(
        _TRACING,
        "_maybe_define_function",
        OT,
        "tf.function call overhead: the graph cache lookup",
    ),
    Rule(
        _TRACING,
        "call_function",
        OX,
        "a tf.function call: look up its traced graph and run it",
    ),
    Rule(
        _TRACING,
        "*",
        GB,
        "tf.function traces Python into a graph (tracing or retracing)",
    ),
    Rule(
        "tensorflow/python/framework/func_graph.py",
        "*",
        GB,
        "a FuncGraph is built from Python code",
    ),
    Rule(
        _POLYMORPHIC,
        "*_initialize",
        GB,
        "first call of a tf.function traces it",
    ),
    Rule(
        _POLYMORPHIC,
        "*get_concrete_function*",
        GB,
        "a concrete function is looked up or traced",
    ),
    Rule(
        "tensorflow/python/autograph/*",
        "*",
        GB,
        "AutoGraph converts Python control flow while tracing",
    ),
    Rule(
        "tensorflow/python/framework/op_def_library.py",
        "*",
        GB,
        "graph ops are added to a graph being built",
    ),
    Rule(
        "tensorflow/python/framework/ops.py",
        "*_create_op_internal",
        GB,
        "graph ops are added to a graph being built",
    ),
    # -- tensor conversion --------------------------------------------------------
    Rule(
        "*/python/framework/ops.py",
        "*convert_to_tensor*",
        TC,
        "Python/numpy values are converted to tensors (copied) on every call",
    ),
    Rule(
        "tensorflow/python/framework/tensor_conversion*.py",
        "*",
        TC,
        "Python/numpy values are converted to tensors",
    ),
    Rule(
        "tensorflow/python/framework/constant_op.py",
        "*",
        TC,
        "numpy arrays become constant tensors (a copy)",
    ),
    # a (nested) Python list becomes a tensor through array_ops' autopacking conversion:
    # it flattens the list and checks each element's type in Python before packing it
    Rule(
        "tensorflow/python/ops/array_ops.py",
        "*autopack*",
        TC,
        "a nested Python list is walked element by element and packed into a tensor",
    ),
    Rule(
        "tensorflow/python/ops/array_ops.py",
        "*_nested_*",
        TC,
        "a nested Python list's elements are read for their dtype (or cast) one by one",
    ),
    # before the catch-all EagerTensor rule below: copying a result out is not an input's
    Rule(
        "~",
        "*EagerTensor._numpy*",
        OC,
        "a tensor is copied back to numpy",
    ),
    Rule(
        "~",
        "*EagerTensor*",
        TC,
        "numpy data is copied into an EagerTensor",
    ),
    # -- op execution ------------------------------------------------------------
    Rule(
        "~",
        "*TFE_Py_FastPathExecute*",
        OX,
        "eager op dispatch: each op runs one at a time from Python",
        weak=True,
        roles=frozenset({"eager-op"}),
    ),
    Rule(
        "~",
        "*TFE_Py_Execute*",
        OX,
        "TensorFlow executes ops or a graph function",
        weak=True,
        roles=frozenset({"op-run"}),
    ),
    Rule(
        _CONCRETE,
        "*_call_flat",
        OX,
        "a traced graph function runs",
        roles=frozenset({"graph-call"}),
    ),
    Rule(
        "tensorflow/python/eager/polymorphic_function/atomic_function.py",
        "*call*",
        OX,
        "a traced graph function runs",
    ),
    Rule("tensorflow/python/eager/execute.py", "*quick_execute", OX, "TensorFlow runs an op"),
    # -- roles only (no category) ----------------------------------------------------
    Rule(
        _ITERATOR_OPS,
        "*_create_iterator",
        None,
        "tf.data makes an iterator",
        roles=frozenset({"iterator-create"}),
    ),
    Rule(
        _ITERATOR_OPS,
        "*.__init__",
        None,
        "a tf.data iterator (or its spec) is made",
        roles=frozenset({"iterator-object"}),
    ),
    Rule(
        _ITERATOR_OPS,
        "OwnedIterator.__next__",
        None,
        "the next element of a tf.data iterator",
        roles=frozenset({"iterator-next"}),
    ),
    Rule(
        _TRACING,
        "_create_concrete_function",
        None,
        "tf.function traces a graph",
        roles=frozenset({"tracer"}),
    ),
    Rule(
        "tensorflow/python/framework/func_graph.py",
        "func_graph_from_py_func",
        None,
        "a graph is traced from a Python function",
        roles=frozenset({"tracer"}),
    ),
    Rule(
        _POLYMORPHIC,
        "*Function.__call__",
        None,
        "a tf.function is called",
        roles=frozenset({"step", "function-call"}),
    ),
    Rule(
        _POLYMORPHIC,
        "*Function._call",
        None,
        "a tf.function runs its traced graph",
        roles=frozenset({"function-graph"}),
    ),
    Rule(
        "tensorflow/python/eager/polymorphic_function/*",
        "*",
        None,
        "tf.function's own machinery",
        roles=frozenset({"function-machinery"}),
    ),
    *(
        Rule(
            path,
            "*",
            None,
            "TensorFlow's ops convert their own arguments",
            roles=frozenset({"op-internal"}),
        )
        for path in (
            "tensorflow/python/ops/*",
            "tensorflow/python/framework/op_def_library.py",
            "tensorflow/python/eager/execute.py",
            "tensorflow/python/framework/tensor_util.py",
        )
    ),
    Rule("*", "_create_iterator", None, "tf.data makes an iterator", roles=_BUILDER),
    Rule("*", "make_iterator", None, "a tf.data iterator op", roles=_BUILDER | _ITERATOR_BUILDER),
    Rule(
        "*",
        "anonymous_iterator*",
        None,
        "a tf.data iterator op",
        roles=_BUILDER | _ITERATOR_BUILDER,
    ),
    Rule("*", "from_tensor_slices", None, "a tf.data dataset is made", roles=_BUILDER),
    Rule("*", "from_tensors", None, "a tf.data dataset is made", roles=_BUILDER),
    Rule("*", "*_create_iterator", None, "tf.data makes an iterator", roles=_ITERATOR_BUILDER),
)

#: tf.data iterator names (the last part of ``Iterator::Root::…``) → what the user wrote.
STAGES: tuple[tuple[str, str, str], ...] = (
    ("Generator", "generator", "the Python generator (`Dataset.from_generator`)"),
    ("FromGenerator", "generator", "the Python generator (`Dataset.from_generator`)"),
    ("MapAndBatch", "map-before-batch", "the `map` function, once per element before `batch`"),
    ("ParallelMapV2", "map", "the parallel `map` function"),
    ("ParallelMap", "map", "the parallel `map` function"),
    ("Map", "map", "the `map` function"),
    ("ParallelInterleaveV4", "read", "the interleaved reading"),
    ("Interleave", "read", "the interleaved reading"),
    ("TFRecord", "read", "reading TFRecord files"),
    ("TextLine", "read", "reading text files"),
    ("FixedLengthRecord", "read", "reading files"),
    ("Filter", "filter", "the `filter` function"),
    ("FlatMap", "map", "the `flat_map` function"),
)

FRAMEWORK = Framework(
    "tensorflow",
    "TensorFlow: tf.data, tf.function, eager op dispatch, conversions",
    RULES,
    STAGES,
    modules=("tensorflow",),
)
