"""The framework APIs a user's line calls, by name and nature: the table the remedies key on.

A row is data: a glob on the module path (as in the culprit rules), a glob on the
qualified name, the API's name as the user writes it (``{cls}`` and ``{fn}`` take the
class and the function of the matched name), and its *nature* (:data:`NATURES`): what kind
of work calling it is. The advice chooses a remedy by the nature of the API at the user's
line and by how often that line runs (:mod:`tfdiag.advise.remedies`): a constructor run on
every call is build cost in the wrong place whatever it constructs. A new API is one row
here; a new nature is one entry in :data:`NATURES` and one rule there.

Where no row names an API, :func:`nature_of` still gives the nature of a constructor
(``__init__``/``__new__``) and of the setup methods every framework spells alike
(``adapt``, ``compile``, ``build``, ``load_*``).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import lru_cache

from tfdiag.records.paths import normalize_path

#: What calling an API is, in the terms its remedy needs.
NATURES: dict[str, str] = {
    "construct": "makes a framework object (a layer, model, lookup table, optimizer, metric, "
    "variable, dataset, tf.function): build cost, once is enough",
    "setup": "prepares an object for use (adapt, compile, build, load weights or a model): "
    "build cost, once is enough",
    "keras-loop": "a Keras loop over data (predict, fit, evaluate): builds an input pipeline, "
    "callbacks and output buffers on every call",
    "keras-step": "one Keras step on one batch (predict_on_batch, train_on_batch, test_on_batch)",
    "model-call": "calls a Keras model or layer; outside a compiled step its Python runs "
    "layer by layer on every call",
    "graph-call": "runs a compiled function (a tf.function, a jitted step)",
    "eager-op": "one framework op dispatched from Python",
    "train-op": "a piece of a training step (a gradient, an optimizer update) run from Python",
    "weights-host": "copies every weight between the framework and NumPy (get_weights, "
    "set_weights)",
    "to-host": "copies a tensor's value into Python or NumPy (.numpy(), float(), "
    "np.asarray), waiting for it to be computed",
    "convert": "converts host data into a tensor",
    "data-iterate": "starts a new pass over a dataset (a new iterator)",
    "data-read": "reads the next element of a dataset",
    "metric": "updates or reads a metric",
    "summary": "writes a summary (TensorBoard)",
    "save": "writes a checkpoint, weights or a model to disk",
    "clear": "clears the framework's state (every model and graph is built again after it)",
    "numpy": "NumPy work on the host",
    "debug-switch": "a debugging setting left on (run_eagerly, dynamic layers, eager "
    "tf.functions, tf.data's debug mode, check_numerics, JAX's disable_jit): slow on purpose",
}

#: The natures whose work is build cost: at a per-iteration count, misplaced.
BUILD_NATURES = frozenset({"construct", "setup"})


@dataclass(frozen=True)
class Api:
    """One API row: ``path`` and ``function`` globs as the culprit rules', the ``name`` the
    user writes (``{cls}``, ``{fn}``: the matched name's class and function), its nature."""

    path: str
    function: str
    name: str
    nature: str

    def __post_init__(self) -> None:
        if self.nature not in NATURES:
            raise ValueError(f"API {self.name!r}: unknown nature {self.nature!r}")


_K = "keras/src/"
_TK = "tf_keras/src/"
_TF = "tensorflow/python/"
_JAX = "jax/_src/"

APIS: tuple[Api, ...] = (
    # Keras 3 (every backend)
    Api(_K + "trainers/*", "*.predict", "model.predict", "keras-loop"),
    Api(_K + "backend/*/trainer.py", "*.predict", "model.predict", "keras-loop"),
    Api(_K + "backend/*/trainer.py", "*.fit", "model.fit", "keras-loop"),
    Api(_K + "trainers/*", "*.fit", "model.fit", "keras-loop"),
    Api(_K + "backend/*/trainer.py", "*.evaluate", "model.evaluate", "keras-loop"),
    Api(_K + "trainers/*", "*.evaluate", "model.evaluate", "keras-loop"),
    Api(_K + "backend/*/trainer.py", "*.*_on_batch", "model.{fn}", "keras-step"),
    Api(_K + "trainers/*", "*.*_on_batch", "model.{fn}", "keras-step"),
    Api(_K + "trainers/*", "*.compile", "model.compile", "setup"),
    Api(_K + "models/cloning.py", "clone_model", "keras.models.clone_model", "construct"),
    Api(_K + "saving/*", "load_model", "keras.models.load_model", "setup"),
    Api(_K + "saving/*", "*load_weights*", "model.load_weights", "setup"),
    Api(_K + "models/*", "*.load_weights", "model.load_weights", "setup"),
    Api(_K + "saving/*", "save_model", "model.save", "save"),
    Api(_K + "models/*", "*.save", "model.save", "save"),
    Api(_K + "models/*", "*.save_weights", "model.save_weights", "save"),
    Api(_K + "layers/layer.py", "Layer.get_weights", "model.get_weights", "weights-host"),
    Api(_K + "layers/layer.py", "Layer.set_weights", "model.set_weights", "weights-host"),
    Api(_K + "layers/layer.py", "Layer.__call__", "calling a model or layer", "model-call"),
    Api(_K + "ops/operation.py", "Operation.__call__", "calling a model or layer", "model-call"),
    Api(_K + "layers/*", "*.adapt", "{cls}.adapt", "setup"),
    Api(_K + "layers/*", "*.build", "{cls}.build", "setup"),
    Api(_K + "metrics/*", "*.update_state", "{cls}.update_state", "metric"),
    Api(_K + "metrics/*", "*.result", "{cls}.result", "metric"),
    Api(_K + "metrics/*", "*.reset_state", "{cls}.reset_state", "metric"),
    Api(_K + "layers/*", "*.__init__", "keras.layers.{cls}", "construct"),
    Api(_K + "layers/*", "*.__new__", "keras.layers.{cls}", "construct"),
    Api(_K + "models/*", "*.__init__", "keras.{cls}", "construct"),
    Api(_K + "models/*", "*.__new__", "keras.{cls}", "construct"),
    Api(_K + "optimizers/*", "*.__init__", "keras.optimizers.{cls}", "construct"),
    Api(_K + "optimizers/*", "*.apply_gradients", "optimizer.apply_gradients", "train-op"),
    Api(_K + "optimizers/*", "*.apply", "optimizer.apply", "train-op"),
    Api(_K + "metrics/*", "*.__init__", "keras.metrics.{cls}", "construct"),
    Api(_K + "losses/*", "*.__init__", "keras.losses.{cls}", "construct"),
    Api(_K + "backend/common/variables.py", "*.__init__", "keras.Variable", "construct"),
    Api(_K + "backend/*/core.py", "convert_to_tensor", "keras.ops.convert_to_tensor", "convert"),
    Api(_K + "ops/core.py", "convert_to_tensor", "keras.ops.convert_to_tensor", "convert"),
    Api(_K + "ops/core.py", "convert_to_numpy", "keras.ops.convert_to_numpy", "to-host"),
    Api(_K + "ops/*", "*", "keras.ops.{fn}", "eager-op"),
    Api(
        _K + "backend/common/global_state.py", "clear_session", "keras.utils.clear_session", "clear"
    ),
    Api(_K + "utils/*", "clear_session", "keras.utils.clear_session", "clear"),
    Api(_K + "callbacks/*", "*.__init__", "keras.callbacks.{cls}", "construct"),
    # tf_keras
    Api(_TK + "engine/training.py", "Model.predict", "model.predict", "keras-loop"),
    Api(_TK + "engine/training.py", "Model.fit", "model.fit", "keras-loop"),
    Api(_TK + "engine/training.py", "Model.evaluate", "model.evaluate", "keras-loop"),
    Api(_TK + "engine/training.py", "Model.*_on_batch", "model.{fn}", "keras-step"),
    Api(_TK + "engine/training.py", "Model.compile", "model.compile", "setup"),
    Api(_TK + "engine/training.py", "Model.load_weights", "model.load_weights", "setup"),
    Api(_TK + "engine/training.py", "Model.save*", "model.{fn}", "save"),
    Api(_TK + "saving/*", "load_model", "tf_keras.models.load_model", "setup"),
    Api(_TK + "models/cloning.py", "clone_model", "tf_keras.models.clone_model", "construct"),
    Api(_TK + "engine/base_layer.py", "Layer.get_weights", "model.get_weights", "weights-host"),
    Api(_TK + "engine/base_layer.py", "Layer.set_weights", "model.set_weights", "weights-host"),
    Api(_TK + "engine/training.py", "Model.get_weights", "model.get_weights", "weights-host"),
    Api(_TK + "engine/base_layer.py", "Layer.__call__", "calling a model or layer", "model-call"),
    Api(_TK + "engine/*", "*.__call__", "calling a model or layer", "model-call"),
    Api(_TK + "engine/base_preprocessing_layer.py", "*.adapt", "{cls}.adapt", "setup"),
    Api(_TK + "layers/*", "*.adapt", "{cls}.adapt", "setup"),
    Api(_TK + "metrics/*", "*.update_state", "{cls}.update_state", "metric"),
    Api(_TK + "metrics/*", "*.result", "{cls}.result", "metric"),
    Api(_TK + "layers/*", "*.__init__", "tf_keras.layers.{cls}", "construct"),
    Api(_TK + "engine/*", "*.__init__", "tf_keras.{cls}", "construct"),
    Api(_TK + "engine/*", "*.__new__", "tf_keras.{cls}", "construct"),
    Api(_TK + "optimizers/*", "*.__init__", "tf_keras.optimizers.{cls}", "construct"),
    Api(_TK + "optimizers/*", "*.apply_gradients", "optimizer.apply_gradients", "train-op"),
    Api(_TK + "metrics/*", "*.__init__", "tf_keras.metrics.{cls}", "construct"),
    Api(_TK + "backend.py", "clear_session", "tf_keras.backend.clear_session", "clear"),
    # TensorFlow
    Api(
        _TF + "eager/polymorphic_function/polymorphic_function.py",
        "Function.__call__",
        "a tf.function",
        "graph-call",
    ),
    Api(
        _TF + "eager/polymorphic_function/polymorphic_function.py",
        "function",
        "tf.function",
        "construct",
    ),
    Api(
        _TF + "eager/polymorphic_function/polymorphic_function.py",
        "Function.__init__",
        "tf.function",
        "construct",
    ),
    Api(
        _TF + "eager/polymorphic_function/concrete_function.py",
        "ConcreteFunction.__call__",
        "calling a concrete function",
        "graph-call",
    ),
    Api(_TF + "eager/backprop.py", "GradientTape.gradient", "tape.gradient", "train-op"),
    Api(_TF + "eager/backprop.py", "GradientTape.*", "tf.GradientTape", "train-op"),
    Api(_TF + "data/ops/dataset_ops.py", "DatasetV2.__iter__", "iter(dataset)", "data-iterate"),
    Api(
        _TF + "data/ops/iterator_ops.py", "OwnedIterator.__init__", "iter(dataset)", "data-iterate"
    ),
    Api(_TF + "data/ops/iterator_ops.py", "OwnedIterator.__next__", "next(iterator)", "data-read"),
    Api(
        _TF + "data/ops/iterator_ops.py", "OwnedIterator.get_next", "iterator.get_next", "data-read"
    ),
    Api(
        _TF + "data/ops/dataset_ops.py", "DatasetV2.cardinality", "dataset.cardinality", "eager-op"
    ),
    Api(_TF + "data/ops/*", "*", "tf.data.Dataset.{fn}", "construct"),
    Api(_TF + "data/experimental/ops/*", "*", "tf.data.experimental.{fn}", "construct"),
    Api(_TF + "ops/lookup_ops.py", "*.__init__", "tf.lookup.{cls}", "construct"),
    Api(_TF + "ops/variables.py", "*.__call__", "tf.Variable", "construct"),
    Api(_TF + "ops/resource_variable_ops.py", "*.__init__", "tf.Variable", "construct"),
    Api(_TF + "ops/variables.py", "*.assign*", "variable.{fn}", "eager-op"),
    Api(_TF + "ops/resource_variable_ops.py", "*.assign*", "variable.{fn}", "eager-op"),
    Api(_TF + "ops/resource_variable_ops.py", "*.numpy", "variable.numpy", "to-host"),
    Api(_TF + "ops/summary_ops_v2.py", "*", "tf.summary.{fn}", "summary"),
    Api(_TF + "summary/*", "*", "tf.summary.{fn}", "summary"),
    Api("tensorboard/*", "*", "tf.summary.{fn}", "summary"),
    Api(_TF + "checkpoint/*", "*.save", "checkpoint.save", "save"),
    Api(_TF + "checkpoint/*", "*.write", "checkpoint.write", "save"),
    Api(_TF + "framework/constant_op.py", "constant*", "tf.constant", "convert"),
    Api(
        _TF + "framework/tensor_conversion*.py",
        "convert_to_tensor*",
        "tf.convert_to_tensor",
        "convert",
    ),
    Api(_TF + "framework/ops.py", "convert_to_tensor*", "tf.convert_to_tensor", "convert"),
    Api(_TF + "framework/ops.py", "_EagerTensorBase.numpy", "tensor.numpy()", "to-host"),
    Api(_TF + "framework/ops.py", "_EagerTensorBase.__float__", "float(tensor)", "to-host"),
    Api(_TF + "framework/ops.py", "_EagerTensorBase.__int__", "int(tensor)", "to-host"),
    Api(_TF + "framework/ops.py", "_EagerTensorBase.__array__", "np.asarray(tensor)", "to-host"),
    Api(_TF + "framework/ops.py", "_EagerTensorBase.__bool__", "bool(tensor)", "to-host"),
    Api(_TF + "framework/ops.py", "_EagerTensorBase.item", "tensor.item()", "to-host"),
    Api(_TF + "ops/logging_ops.py", "print_v2", "tf.print", "eager-op"),
    Api(_TF + "framework/override_binary_operator.py", "*", "a tensor operator", "eager-op"),
    Api(_TF + "ops/tensor_getitem_override.py", "*", "tensor[...]", "eager-op"),
    Api(_TF + "ops/*", "*", "tf.{fn}", "eager-op"),
    Api(_TF + "framework/ops.py", "*", "tf.{fn}", "eager-op"),
    Api(_TF + "eager/context.py", "*", "tf.config.{fn}", "eager-op"),
    Api(_TF + "framework/config.py", "*", "tf.config.{fn}", "eager-op"),
    Api(_TF + "keras/*", "*.__init__", "tf.keras.{cls}", "construct"),
    # JAX
    Api(_JAX + "numpy/*", "*", "jnp.{fn}", "eager-op"),
    Api(_JAX + "lax/*", "*", "jax.lax.{fn}", "eager-op"),
    Api(_JAX + "random.py", "*", "jax.random.{fn}", "eager-op"),
    Api(_JAX + "pjit.py", "*cache_miss*", "a jitted function", "graph-call"),
    Api(_JAX + "api.py", "jit", "jax.jit", "construct"),
    Api(_JAX + "pjit.py", "jit", "jax.jit", "construct"),
    Api(_JAX + "api.py", "device_put*", "jax.device_put", "convert"),
    Api(_JAX + "api.py", "device_get", "jax.device_get", "to-host"),
    Api(_JAX + "array.py", "ArrayImpl.__getitem__", "array[...]", "eager-op"),
    Api(_JAX + "array.py", "ArrayImpl.__array__", "np.asarray(array)", "to-host"),
    Api(_JAX + "array.py", "ArrayImpl._value", "np.asarray(array)", "to-host"),
    Api(_JAX + "array.py", "ArrayImpl.__float__", "float(array)", "to-host"),
    Api(_JAX + "array.py", "ArrayImpl.item", "array.item()", "to-host"),
    Api(_JAX + "array.py", "ArrayImpl.block_until_ready", "array.block_until_ready", "to-host"),
    Api(_JAX + "*", "*", "jax.{fn}", "eager-op"),
    # NumPy
    Api("numpy/*", "*", "np.{fn}", "numpy"),
)

#: Method names that prepare an object for use on every framework: where no row names
#: the API, they are setup (build cost).
_SETUP_NAMES = re.compile(r"^(?:adapt|compile|build|load(?:_\w+)?|restore|from_config)$")


@dataclass(frozen=True)
class ApiMatch:
    """An API as the user's line calls it: its row's name filled in, and its nature."""

    name: str
    nature: str
    #: True when a row names it; False when only the name rule gave its nature.
    catalogued: bool = True


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[re.Pattern[str], re.Pattern[str], Api], ...]:
    return tuple(
        (re.compile(fnmatch.translate(a.path)), re.compile(fnmatch.translate(a.function)), a)
        for a in APIS
    )


def _fill(template: str, qualname: str) -> str:
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    fn = parts[-1]
    cls = parts[-2] if len(parts) > 1 else fn
    return template.replace("{cls}", cls).replace("{fn}", fn)


@lru_cache(maxsize=8192)
def api_of(file: str, qualname: str) -> ApiMatch | None:
    """The API the function ``file:qualname`` is, as the user calls it; None when no row
    names it and its name says nothing either."""
    path = normalize_path(file)
    last = qualname.rsplit(".", 1)[-1]
    for path_re, name_re, api in _compiled():
        if path_re.match(path) and (name_re.match(qualname) or name_re.match(last)):
            return ApiMatch(_fill(api.name, qualname), api.nature)
    return nature_of(path, qualname)


def nature_of(path: str, qualname: str) -> ApiMatch | None:
    """The nature of an API no row names, from its name alone: a constructor, or a setup
    method (``adapt``, ``compile``, ``build``, ``load_*``); None otherwise."""
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    last = parts[-1]
    cls = parts[-2] if len(parts) > 1 else ""
    if last in ("__init__", "__new__") and cls:
        return ApiMatch(f"{cls}(...)", "construct", catalogued=False)
    if _SETUP_NAMES.match(last):
        return ApiMatch(f"{cls + '.' if cls else ''}{last}", "setup", catalogued=False)
    return None
