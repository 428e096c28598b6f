"""The culprit rules of JAX and of Keras 3 on its JAX backend.

Names read from the installed sources of Keras 3.15 (keras/src/backend/jax/trainer.py,
keras/src/callbacks/callback_list.py) and jax 0.10 (jax/_src/pjit.py, dispatch.py,
interpreters/pxla.py, partial_eval.py). They go before the TensorFlow and Keras rules
(the first matching rule wins); none of them names a function a TensorFlow run calls:
Keras starts its callback thread pool only on thread-safe backends (JAX, NumPy), never on
TensorFlow.
"""

from __future__ import annotations

from tfdiag.records.catalog.rule import Category, Framework, Rule

#: Keras' jitted steps on JAX (``jax.jit`` of these, named so in JAX's compile events).
JIT_STEPS = ("train_step", "test_step", "predict_step")

_TRAINER = "keras/src/backend/jax/trainer.py"
IP = Category.INPUT_PIPELINE
GB = Category.GRAPH_BUILDING
OX = Category.OP_EXECUTION
OT = Category.OTHER
ENTRY = frozenset({"entry"})
DISPATCH = frozenset({"callback-dispatch"})

#: ``CallbackList`` methods that run Keras' thread pool (the last one waits for it: see
#: :data:`RESULT_WAITS`) for batch-end callbacks: started
#: by each ``predict``/``fit``/``evaluate`` call, a thread per batch handed to it, joined at
#: the end. Framework dispatch, not the user's callbacks (a callback that overrides a
#: batch-end hook turns the pool off: Keras then calls it on the main thread).
CALLBACK_POOL = (
    "CallbackList._async_dispatch",
    "CallbackList._on_begin",
    "CallbackList._on_end",
    "CallbackList._flush_futures",
)
#: What Python waits in for the device's results: JAX runs a compiled program
#: asynchronously, so its compute shows as the first wait on its output (Keras' callback
#: pool converting the batch's outputs, an array read back to numpy).
RESULT_WAITS = (
    ("keras/src/callbacks/callback_list.py", "CallbackList._flush_futures"),
    # Keras' logs made Python floats for callbacks that override a batch-end hook (the pool
    # is then off, and the main thread waits there for the step's loss), a user's
    # `keras.ops.convert_to_numpy(out)`: `np.array` of a JAX array blocks until it is ready.
    ("keras/src/backend/jax/core.py", "convert_to_numpy"),
    ("jax/_src/array.py", "ArrayImpl._value"),
    ("jax/_src/array.py", "ArrayImpl.__array__"),
    ("jax/_src/array.py", "ArrayImpl.block_until_ready"),
    ("jax/_src/array.py", "ArrayImpl._single_device_array_to_np_array_did_copy"),
)

JAX_RULES: tuple[Rule, ...] = (
    Rule(
        "jax/_src/traceback_util.py",
        "*reraise_with_filtered_traceback",
        Category.WRAPPER,
        "JAX's traceback filtering decorator (every public jax function's)",
    ),
    # -- user-facing step functions (entries) -------------------------------------
    Rule(_TRAINER, "JAXTrainer.predict", OT, "Keras 3 predict() on JAX", roles=ENTRY),
    Rule(_TRAINER, "JAXTrainer.fit", OT, "Keras 3 fit() on JAX", roles=ENTRY),
    Rule(_TRAINER, "JAXTrainer.evaluate", OT, "Keras 3 evaluate() on JAX", roles=ENTRY),
    Rule(_TRAINER, "JAXTrainer.*_on_batch", OT, "Keras 3 *_on_batch() on JAX", roles=ENTRY),
    # -- the callback thread pool ---------------------------------------------------
    *(
        Rule(
            "keras/src/callbacks/callback_list.py",
            name,
            OT,
            "Keras starts a thread pool on every predict/fit/evaluate call and hands it each "
            "batch-end callback (thread-safe backends such as JAX): per-call framework "
            "dispatch, not your callbacks",
            claims=True,
            roles=frozenset({"callback-dispatch"}),
        )
        for name in CALLBACK_POOL[:3]
    ),
    *(
        Rule(
            path,
            name,
            OX,
            "Python waits here for the jitted program's results (JAX runs it "
            "asynchronously): the model's compute, seen from Python",
            claims=True,
            roles=frozenset({"result-wait"}) | (DISPATCH if "callback" in path else frozenset()),
        )
        for path, name in RESULT_WAITS
    ),
    # -- Keras' JAX trainer -----------------------------------------------------------
    Rule(
        _TRAINER,
        "JAXEpochIterator.*",
        IP,
        "Keras 3 builds an epoch iterator over the input (numpy batches for JAX) on every "
        "predict/fit/evaluate call",
    ),
    Rule(
        _TRAINER,
        "*_make_function.<locals>.iterator_step",
        OX,
        "Keras' step on JAX: calls the jitted step (dispatch of the compiled XLA program and "
        "its run) on the next batch",
        roles=frozenset({"step"}),
    ),
    Rule(
        _TRAINER,
        "*make_predict_function.<locals>.*",
        OX,
        "Keras' predict step on JAX (jitted unless run_eagerly)",
    ),
    Rule(
        _TRAINER,
        "JAXTrainer.make_*_function",
        GB,
        "Keras wraps its step in jax.jit (once per compile(), or again when it was reset)",
    ),
    *(
        Rule(
            _TRAINER,
            f"JAXTrainer.{step}",  # not *_step: a glob also matches a last name (iterator_step)
            OX,
            "Keras' step body on JAX (run as Python only when the step is not jitted: "
            "run_eagerly=True or jit_compile=False)",
            roles=frozenset({"eager-step"}),
        )
        for step in JIT_STEPS
    ),
    Rule(
        _TRAINER,
        "JAXTrainer.*state*",
        OT,
        "Keras gathers the model's variables into the jitted step's state and writes them "
        "back, on every call",
    ),
    # -- a Keras layer or model called from the user's code ---------------------------
    *(
        Rule(
            path,
            name,
            None,
            "a Keras layer or model called: on JAX, outside a jitted function, it runs op "
            "by op in Python on every call",
            roles=frozenset({"layer-call"}),
        )
        for path, name in (
            ("keras/src/layers/layer.py", "Layer.__call__"),
            ("keras/src/ops/operation.py", "Operation.__call__"),
        )
    ),
    # -- JAX itself -----------------------------------------------------------------
    Rule("jax/_src/interpreters/pxla.py", "*", GB, "JAX lowers and compiles to XLA"),
    Rule("jax/_src/interpreters/mlir.py", "*", GB, "JAX lowers a jaxpr to MLIR"),
    Rule("jax/_src/compiler.py", "*", GB, "XLA compiles a jitted function"),
    Rule(
        "jax/_src/dispatch.py",
        "apply_primitive",
        OX,
        "a JAX op run eagerly: one compiled primitive dispatched from Python",
        claims=True,
        roles=frozenset({"primitive-dispatch"}),
    ),
)

FRAMEWORK = Framework(
    "jax",
    "JAX (jax.jit's compile path, eager primitives, array reads) and Keras 3's JAX backend "
    "(its trainer, its callback thread pool)",
    JAX_RULES,
)
