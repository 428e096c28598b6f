"""tf_keras (Keras 2 as its own package, ``tf_keras/src/``).

Names were read from the installed sources of tf_keras 2.21. The first matching rule wins,
so specific rules come before broad ones. TensorFlow's own ``tf.keras`` of TF 2.0-2.3 is in
:mod:`~tfdiag.records.catalog.legacy`.
"""

from __future__ import annotations

from tfdiag.records.catalog.rule import Category, Framework, Rule

IP = Category.INPUT_PIPELINE
CB = Category.CALLBACKS
OC = Category.OUTPUT_CONVERSION
OT = Category.OTHER

ENTRY = frozenset({"entry"})
STEP = frozenset({"step"})
BUILDS_MODEL = frozenset({"model-builder"})
_TRAINING = "tf_keras/src/engine/training.py"

RULES: tuple[Rule, ...] = (
    # -- user-facing step functions (entries; iteration count of a bare .prof) -------
    Rule(_TRAINING, "predict", OT, "tf_keras predict()", roles=ENTRY),
    Rule(_TRAINING, "fit", OT, "tf_keras fit()", roles=ENTRY),
    Rule(_TRAINING, "evaluate", OT, "tf_keras evaluate()", roles=ENTRY),
    Rule(_TRAINING, "*_on_batch", OT, "tf_keras *_on_batch()", roles=ENTRY),
    # -- input pipeline / data adapters -------------------------------------------
    Rule(
        "tf_keras/src/engine/data_adapter.py",
        "*",
        IP,
        "tf_keras wraps the input in a DataHandler and a tf.data pipeline on every call, and "
        "reads a Sequence or generator through it",
        claims=True,
    ),
    # -- callbacks & progress -----------------------------------------------------
    Rule(
        "tf_keras/src/callbacks.py",
        "CallbackList.*",
        CB,
        "tf_keras calls every callback's hooks here, the user's own callbacks included",
        claims=True,
        roles=frozenset({"callback-hook"}),
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
        _TRAINING,
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
    # -- roles only (no category) ----------------------------------------------------
    *(
        Rule(
            _TRAINING,
            f"*make_{kind}_function.<locals>.{kind}_function",
            None,
            f"tf_keras {kind} step",
            roles=STEP,
        )
        for kind in ("train", "predict", "test")
    ),
    Rule(
        "tf_keras/src/engine/functional.py",
        "Functional.__init__",
        None,
        "a model is built",
        roles=BUILDS_MODEL,
    ),
    Rule(
        "tf_keras/src/engine/sequential.py",
        "Sequential.__init__",
        None,
        "a model is built",
        roles=BUILDS_MODEL,
    ),
    Rule(
        "tf_keras/src/saving/saving_api.py",
        "load_model",
        None,
        "a model is loaded",
        roles=BUILDS_MODEL,
    ),
    Rule(
        "tf_keras/src/models/cloning.py",
        "clone_model",
        None,
        "a model is cloned",
        roles=BUILDS_MODEL,
    ),
    Rule(_TRAINING, "Model.compile", None, "a model is compiled", roles=BUILDS_MODEL),
    Rule(
        _TRAINING,
        "Model.load_weights",
        None,
        "a model's weights are read from a file and assigned",
        roles=BUILDS_MODEL,
    ),
    *(
        Rule(
            path, name, None, "an optimizer is constructed", roles=frozenset({"optimizer-builder"})
        )
        for path, name in (
            ("tf_keras/src/optimizers/optimizer.py", "_BaseOptimizer.__init__"),
            ("tf_keras/src/optimizers/legacy/optimizer_v2.py", "OptimizerV2.__init__"),
        )
    ),
    Rule("tf_keras/src/callbacks*", "*", None, "tf_keras callbacks", roles=frozenset({"callback"})),
    *(
        Rule(path, "*", None, "tf_keras layers and optimizers", roles=frozenset({"op-internal"}))
        for path in ("tf_keras/src/layers/*", "tf_keras/src/optimizers/*")
    ),
    *(
        Rule(
            "*", name, None, "tf_keras builds a data handler", roles=frozenset({"pipeline-builder"})
        )
        for name in (
            "get_data_handler",
            "select_data_adapter",
            "single_batch_iterator",
            "slice_inputs",
        )
    ),
)

FRAMEWORK = Framework(
    "tf_keras", "tf_keras (Keras 2 as its own package)", RULES, modules=("tf_keras",)
)
