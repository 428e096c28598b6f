"""The built-in culprit table.

Names were read from the installed sources of TensorFlow 2.21 / Keras 3.15 /
tf_keras 2.21, plus the TF 2.0-2.3 names the seed profiles reported. The first
matching rule wins, so specific rules come before broad ones.
docs/catalog.md is generated from this table (``python -m tfdiag catalog``).
"""

from __future__ import annotations

from tfdiag.records.catalog.rule import Category, Rule

IP = Category.INPUT_PIPELINE
GB = Category.GRAPH_BUILDING
TC = Category.TENSOR_CONVERSION
OX = Category.OP_EXECUTION
CB = Category.CALLBACKS
OC = Category.OUTPUT_CONVERSION
WR = Category.WRAPPER
OT = Category.OTHER

RULES: tuple[Rule, ...] = (
    # -- user-facing step functions (entries; iteration count of a bare .prof) -------
    Rule("keras/src/backend/tensorflow/trainer.py", "predict", OT, "Keras 3 predict()", entry=True),
    Rule("keras/src/backend/tensorflow/trainer.py", "fit", OT, "Keras 3 fit()", entry=True),
    Rule(
        "keras/src/backend/tensorflow/trainer.py", "evaluate", OT, "Keras 3 evaluate()", entry=True
    ),
    Rule(
        "keras/src/backend/tensorflow/trainer.py",
        "*_on_batch",
        OT,
        "Keras 3 *_on_batch()",
        entry=True,
    ),
    Rule("tf_keras/src/engine/training.py", "predict", OT, "tf_keras predict()", entry=True),
    Rule("tf_keras/src/engine/training.py", "fit", OT, "tf_keras fit()", entry=True),
    Rule("tf_keras/src/engine/training.py", "evaluate", OT, "tf_keras evaluate()", entry=True),
    Rule("tf_keras/src/engine/training.py", "*_on_batch", OT, "tf_keras *_on_batch()", entry=True),
    # -- transparent wrappers: looked through, never blamed ------------------------
    Rule("*/utils/traceback_utils.py", "*error_handler", WR, "traceback filtering decorator"),
    Rule("*/util/traceback_utils.py", "*error_handler", WR, "traceback filtering decorator"),
    Rule("tensorflow/python/util/dispatch.py", "*", WR, "op dispatch decorator"),
    Rule("tensorflow/python/profiler/trace.py", "*wrapped", WR, "profiler trace decorator"),
    Rule("tensorflow/python/ops/weak_tensor_ops.py", "*wrapper", WR, "weak tensor decorator"),
    Rule("tensorflow/python/util/deprecation.py", "*new_func", WR, "deprecation decorator"),
    Rule("tfdiag/*", "*", WR, "tfdiag's own hooks (trace recorder, callback timer)"),
    Rule("~", "<built-in method builtins.next>", WR, "iterator protocol"),
    Rule("~", "<built-in method builtins.iter>", WR, "iterator protocol"),
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
    # -- input pipeline / data adapters -------------------------------------------
    Rule(
        "keras/src/trainers/data_adapters/py_dataset_adapter.py",
        "*",
        IP,
        "Keras 3 reads a PyDataset: the user's __getitem__ runs here, on the calling thread "
        "when it has no workers",
        claims=True,
    ),
    Rule(
        "keras/src/trainers/data_adapters/generator_data_adapter.py",
        "*",
        IP,
        "Keras 3 reads a Python generator batch by batch",
        claims=True,
    ),
    Rule(
        "keras/src/trainers/data_adapters/*",
        "*",
        IP,
        "Keras 3 builds a data adapter (and a tf.data pipeline) for the input on every call",
    ),
    Rule(
        "keras/src/trainers/epoch_iterator.py",
        "*",
        IP,
        "Keras 3 builds an epoch iterator over the input on every call",
    ),
    Rule(
        "keras/src/backend/tensorflow/trainer.py",
        "TFEpochIterator.*",
        IP,
        "Keras 3 builds a tf.data epoch iterator on every predict/fit/evaluate call",
    ),
    Rule(
        "tf_keras/src/engine/data_adapter.py",
        "*",
        IP,
        "tf_keras wraps the input in a DataHandler and a tf.data pipeline on every call, and "
        "reads a Sequence or generator through it",
        claims=True,
    ),
    Rule(
        "tensorflow/python/ops/gen_dataset_ops.py",
        "*",
        IP,
        "tf.data ops (iterator creation, dataset graph) run on every call",
    ),
    Rule(
        "tensorflow/python/data/ops/iterator_ops.py",
        "*",
        IP,
        "a tf.data iterator is created",
    ),
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
        "tensorflow/python/eager/polymorphic_function/tracing_compilation.py",
        "trace_function",
        OT,
        "tf.function call overhead: bind the arguments, look up the traced graph (the trace "
        "itself, when one happens, is _create_concrete_function)",
    ),
    Rule(
        "tensorflow/python/eager/polymorphic_function/tracing_compilation.py",
        "_maybe_define_function",
        OT,
        "tf.function call overhead: the graph cache lookup",
    ),
    Rule(
        "tensorflow/python/eager/polymorphic_function/tracing_compilation.py",
        "call_function",
        OX,
        "a tf.function call: look up its traced graph and run it",
    ),
    Rule(
        "tensorflow/python/eager/polymorphic_function/tracing_compilation.py",
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
        "tensorflow/python/eager/polymorphic_function/polymorphic_function.py",
        "*_initialize",
        GB,
        "first call of a tf.function traces it",
    ),
    Rule(
        "tensorflow/python/eager/polymorphic_function/polymorphic_function.py",
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
    Rule(
        "keras/src/backend/tensorflow/core.py",
        "*convert_to_tensor",
        TC,
        "Keras converts inputs to tensors",
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
    ),
    Rule("~", "*TFE_Py_Execute*", OX, "TensorFlow executes ops or a graph function", weak=True),
    Rule(
        "tensorflow/python/eager/polymorphic_function/concrete_function.py",
        "*_call_flat",
        OX,
        "a traced graph function runs",
    ),
    Rule(
        "tensorflow/python/eager/polymorphic_function/atomic_function.py",
        "*call*",
        OX,
        "a traced graph function runs",
    ),
    Rule("tensorflow/python/eager/execute.py", "*quick_execute", OX, "TensorFlow runs an op"),
    # -- callbacks & progress -----------------------------------------------------
    Rule(
        "keras/src/callbacks/callback_list.py",
        "CallbackList.*",
        CB,
        "Keras calls every callback's hooks here, the user's own callbacks included",
        claims=True,
    ),
    Rule(
        "keras/src/callbacks/*",
        "*",
        CB,
        "Keras callbacks run every batch",
    ),
    Rule(
        "keras/src/utils/progbar.py",
        "*",
        CB,
        "the progress bar redraws every batch",
    ),
    Rule(
        "tf_keras/src/callbacks.py",
        "CallbackList.*",
        CB,
        "tf_keras calls every callback's hooks here, the user's own callbacks included",
        claims=True,
    ),
    Rule(
        "tf_keras/src/callbacks.py",
        "*",
        CB,
        "tf_keras callbacks run every batch",
    ),
    Rule(
        "tf_keras/src/utils/generic_utils.py",
        "Progbar.*",
        CB,
        "the progress bar redraws every batch",
    ),
    # -- output conversion --------------------------------------------------------
    Rule(
        "keras/src/backend/tensorflow/trainer.py",
        "potentially_ragged_concat",
        OC,
        "predict concatenates per-batch outputs",
    ),
    Rule(
        "keras/src/backend/tensorflow/trainer.py",
        "convert_to_np_if_not_ragged",
        OC,
        "outputs are copied back to numpy",
    ),
    Rule(
        "keras/src/utils/python_utils.py",
        "pythonify_logs",
        OC,
        "metric tensors become Python floats every call (a device sync)",
    ),
    Rule(
        "tf_keras/src/engine/training.py",
        "potentially_ragged_concat",
        OC,
        "predict concatenates per-batch outputs",
    ),
    Rule(
        "tf_keras/src/utils/tf_utils.py",
        "sync_to_numpy_or_python_type",
        OC,
        "metric and output tensors become numpy/Python values (a device sync)",
    ),
)

#: Input-pipeline functions that *build* a pipeline (an adapter, a dataset, an iterator), as
#: opposed to reading the next batch from one. A builder running on every call is what
#: `per-call-input-pipeline` reports; per-batch reads inside one `fit` are normal.
PIPELINE_BUILDERS: tuple[str, ...] = (
    "*.__init__",
    "get_data_adapter",
    "get_tf_dataset",
    "slice_inputs",
    "get_data_handler",
    "select_data_adapter",
    "single_batch_iterator",
    "_process_inputs",
    "_standardize_user_data",
    "_select_training_loop",
    "_create_iterator",
    "make_iterator",
    "anonymous_iterator*",
    "from_tensor_slices",
    "from_tensors",
)
