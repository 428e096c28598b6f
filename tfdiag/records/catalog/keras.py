"""Keras 3: its core (data adapters, callbacks, models, ops and layers) and its TensorFlow
backend (``keras/src/backend/tensorflow/``).

Names were read from the installed sources of Keras 3.15. The first matching rule wins, so
specific rules come before broad ones.
"""

from __future__ import annotations

from tfdiag.records.catalog.rule import Category, Framework, Rule

IP = Category.INPUT_PIPELINE
TC = Category.TENSOR_CONVERSION
CB = Category.CALLBACKS
OC = Category.OUTPUT_CONVERSION
OT = Category.OTHER

ENTRY = frozenset({"entry"})
STEP = frozenset({"step"})
BUILDS_MODEL = frozenset({"model-builder"})
OP_INTERNAL = frozenset({"op-internal"})
_TRAINER = "keras/src/backend/tensorflow/trainer.py"

RULES: tuple[Rule, ...] = (
    # -- user-facing step functions (entries; iteration count of a bare .prof) -------
    Rule(_TRAINER, "predict", OT, "Keras 3 predict()", roles=ENTRY),
    Rule(_TRAINER, "fit", OT, "Keras 3 fit()", roles=ENTRY),
    Rule(_TRAINER, "evaluate", OT, "Keras 3 evaluate()", roles=ENTRY),
    Rule(_TRAINER, "*_on_batch", OT, "Keras 3 *_on_batch()", roles=ENTRY),
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
        _TRAINER,
        "TFEpochIterator.*",
        IP,
        "Keras 3 builds a tf.data epoch iterator on every predict/fit/evaluate call",
    ),
    # -- tensor conversion --------------------------------------------------------
    Rule(
        "keras/src/backend/tensorflow/core.py",
        "*convert_to_tensor",
        TC,
        "Keras converts inputs to tensors",
    ),
    # -- callbacks & progress -----------------------------------------------------
    Rule(
        "keras/src/callbacks/callback_list.py",
        "CallbackList.*",
        CB,
        "Keras calls every callback's hooks here, the user's own callbacks included",
        claims=True,
        roles=frozenset({"callback-hook"}),
    ),
    Rule(
        "keras/src/callbacks/*",
        "*",
        CB,
        "Keras callbacks run every batch",
        roles=frozenset({"callback"}),
    ),
    Rule(
        "keras/src/utils/progbar.py",
        "*",
        CB,
        "the progress bar redraws every batch",
    ),
    # -- output conversion --------------------------------------------------------
    Rule(
        _TRAINER,
        "potentially_ragged_concat",
        OC,
        "predict concatenates per-batch outputs",
    ),
    Rule(
        _TRAINER,
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
    # -- roles only (no category) ----------------------------------------------------
    *(
        Rule("keras/src/trainers/trainer.py", m, None, "Keras 3 Trainer method", roles=ENTRY)
        for m in ("predict", "fit", "evaluate", "*_on_batch")
    ),
    Rule(_TRAINER, "*_make_function.<locals>.function", None, "Keras 3 step", roles=STEP),
    Rule(_TRAINER, "*.train_step", None, "Keras 3 train_step", roles=STEP),
    Rule(
        "keras/src/models/functional.py",
        "Functional.__init__",
        None,
        "a model is built",
        roles=BUILDS_MODEL,
    ),
    Rule(
        "keras/src/models/sequential.py",
        "Sequential.__init__",
        None,
        "a model is built",
        roles=BUILDS_MODEL,
    ),
    Rule("keras/src/models/model.py", "Model.__new__", None, "a model is made", roles=BUILDS_MODEL),
    Rule(
        "keras/src/saving/saving_api.py",
        "load_model",
        None,
        "a model is loaded",
        roles=BUILDS_MODEL,
    ),
    Rule(
        "keras/src/models/cloning.py", "clone_model", None, "a model is cloned", roles=BUILDS_MODEL
    ),
    Rule(
        "keras/src/models/model.py",
        "Model.load_weights",
        None,
        "a model's weights are read from a file and assigned",
        roles=BUILDS_MODEL,
    ),
    Rule(
        "keras/src/trainers/trainer.py",
        "Trainer.compile",
        None,
        "a model is compiled",
        roles=BUILDS_MODEL,
    ),
    Rule(
        "keras/src/optimizers/base_optimizer.py",
        "BaseOptimizer.__init__",
        None,
        "an optimizer is constructed",
        roles=frozenset({"optimizer-builder"}),
    ),
    *(
        Rule(path, "*", None, "Keras ops, layers and optimizers", roles=OP_INTERNAL)
        for path in (
            "keras/src/backend/tensorflow/numpy.py",
            "keras/src/backend/tensorflow/nn.py",
            "keras/src/backend/tensorflow/math.py",
            "keras/src/backend/common/*",
            "keras/src/ops/*",
            "keras/src/layers/*",
            "keras/src/optimizers/*",
            "keras/src/backend/tensorflow/optimizer.py",
        )
    ),
    *(
        Rule(
            "*", name, None, "Keras 3 builds a data adapter", roles=frozenset({"pipeline-builder"})
        )
        for name in ("get_data_adapter", "get_tf_dataset")
    ),
)

FRAMEWORK = Framework(
    "keras", "Keras 3: its core and its TensorFlow backend", RULES, modules=("keras",)
)
