"""The fix texts on Keras-on-JAX and JAX programs: the ``jax:`` keys of the findings table
(an overlay, :mod:`tfdiag.advise.fixes`).

A finding picks ``jax:<variant>``, then ``jax:<call kind>``, then ``jax:other`` on a run whose
framework is JAX (:meth:`tfdiag.advise.finding.FindingSpec.fix_for`); a finding given a
``jax:other`` here never falls back to its TensorFlow texts. None of these names a
TensorFlow-only API (tests/test_jax_advice.py checks it). The remedies were timed on
Keras 3.15 / jax 0.10 (CPU): docs/jax.md.
"""

from __future__ import annotations

#: A jitted inference function over the model's state, built once.
_JIT_PREDICT = (
    "`fn = jax.jit(lambda tv, ntv, x: model.stateless_call(tv, ntv, x, training=False)[0])`, "
    "built once and called with `[v.value for v in model.trainable_variables]`, "
    "`[v.value for v in model.non_trainable_variables]` and the batch"
)
_JIT_TRAIN = (
    "a `jax.jit` step built once over `jax.value_and_grad(model.stateless_compute_loss, "
    "has_aux=True)` and `model.optimizer.stateless_apply`, carrying the state as arrays"
)
_SHAPES = (
    "give it a few fixed shapes: pad each batch up to one of a few bucket sizes "
    "(`np.pad` to the next multiple of 32), pad or drop the short last batch, or cut "
    "requests into chunks of one size"
)

FIXES: dict[str, dict[str, str]] = {
    "per-call-input-pipeline": {
        "predict": "`model.predict` sets up a data adapter, an epoch iterator, callbacks and "
        "a thread pool for the batch-end callbacks on every call, around one jitted step. "
        "For in-memory batches call `model.predict_on_batch(x)` (Keras' jitted step without "
        "that set-up), or jit the model once: " + _JIT_PREDICT + ".",
        "fit": "Each `fit` call sets up a data adapter, an epoch iterator, callbacks and "
        "their thread pool: for one batch at a time call `model.train_on_batch(x, y)` "
        "instead of `fit`, or " + _JIT_TRAIN + ".",
        "evaluate": "Each `evaluate` call sets up a data adapter, an epoch iterator and "
        "callbacks: call `model.test_on_batch(x, y)` per batch instead.",
        "on-batch": "`{method}` still checks and converts each batch before Keras' jitted "
        "step: jit your own step once and call it with arrays.",
        "on-batch-predict": "`{method}` still checks and converts each batch before Keras' "
        "jitted step: jit the forward pass once, " + _JIT_PREDICT + ".",
        "on-batch-train": "`{method}` still checks and converts each batch before Keras' "
        "jitted step: jit your own training step once, " + _JIT_TRAIN + ".",
        "other": "Set the input up once, outside the repeated call, and iterate over it; for "
        "single in-memory batches call `model.predict_on_batch(x)` / "
        "`model.train_on_batch(x, y)` or a function jitted once.",
    },
    "per-iteration-tracing": {
        "static": "In `{function}`, {argument} is a static argument (`static_argnums` / "
        "`static_argnames`) whose value changes on every call, and JAX compiles once per "
        "static value: drop it from `static_argnums` / `static_argnames`, so that it is "
        "traced as an array, an input of one compiled program.",
        "python-value": "In `{function}`, {argument} is a Python scalar on some calls and "
        "an array on others (a weakly typed value compiles apart): pass it the same way "
        "every time, as an array of one dtype (`jnp.asarray(x, jnp.float32)`).",
        "python-structure": "In `{function}`, {argument} is a Python container whose "
        "structure changes (its length, its keys): each pytree structure compiles anew; "
        "pass arrays in a structure that stays the same (stack a list into one array).",
        "shape": "JAX compiles `{function}` once per input shape, and {argument} changes "
        "shape between calls: " + _SHAPES + ".",
        "dtype": "Cast the inputs to one dtype before the call (`.astype('float32')`): JAX "
        "compiles `{function}` once per dtype.",
        "new-function": "`jax.jit` is applied anew on every call (or to a function defined "
        "anew: a lambda, a closure), so JAX never finds `{function}` in its cache: jit it "
        "once, outside the loop (a module-level `@jax.jit`), and call that object.",
        "other": "A jitted function is compiled again on every call, for a cause JAX did "
        "not explain: `jax.config.update('jax_explain_cache_misses', True)` logs why each "
        "compile happens.",
    },
    "eager-execution": {
        "run-eagerly": "The model is compiled with `run_eagerly=True`, a debugging setting: "
        "every step runs op by op in Python instead of one jitted XLA program. Compile "
        "without it (`model.compile(..., run_eagerly=False)`, the default), with the "
        "default `jit_compile=True`.",
        "jit-off": "The model is compiled with `jit_compile=False`: on JAX every step then "
        "runs op by op in Python. Compile with `jit_compile=True` (the default) and "
        "`run_eagerly=False`.",
        "eager-step": "Keras ran the model's step as Python, op by op: on JAX it jits the "
        "step only when the model is compiled with `run_eagerly=False` and "
        "`jit_compile=True` (the defaults), so one of them is set otherwise where your code "
        "calls `compile()`. Compile with the defaults.",
        "model-call": "`{entry}` calls the model directly (`model(x)`), which on JAX runs "
        "its layers op by op in Python on every call, outside `jax.jit`: call "
        "`model.predict_on_batch(x)`, Keras' jitted step, or jit the forward pass once: "
        + _JIT_PREDICT
        + ".",
        "jax-ops": "Your code runs JAX ops one at a time from Python, outside `jax.jit`: do "
        "the work on whole arrays at once (one op over the batch axis instead of a Python "
        "loop over its rows), or compile the function that holds it with `jax.jit`.",
        "other": "The model's ops run one by one from Python, outside `jax.jit`: wrap the "
        "work in `jax.jit` once (" + _JIT_PREDICT + ").",
    },
    "compute-bound": {
        "alone": "The time is in the model's compiled XLA program (its run, and Python "
        "waiting for its results), so Python-side changes won't help: make the work "
        "cheaper (mixed precision, `keras.mixed_precision.set_global_policy('mixed_bfloat16')` "
        "on hardware that has it; a smaller model or input) or run it on faster hardware.",
        "first": "Most of the time is in the model's compiled XLA program: the Python-side "
        "findings below remove only their share of it. Beyond them, make the work cheaper "
        "(mixed precision, a smaller model or input) or run it on faster hardware.",
        "other": "Most of what is left is the model's compiled XLA program: after the fixes "
        "above, make it cheaper (mixed precision, a smaller model or input).",
    },
    "xla-compile-per-shape": {
        "keras-step": "Keras compiles its jitted `{function}` once per batch shape (a new "
        "trace and a new XLA executable), and {dimension} changes between calls: give every "
        "step one of a few shapes: pad each request up to one of a few bucket sizes (`np.pad` "
        "to the next multiple of 64) and drop the padded rows' outputs.",
        "keras-step-length": "Keras compiles its jitted `{function}` once per batch shape (a "
        "new trace and a new XLA executable), and {dimension} changes between calls: pad "
        "each sequence up to one of a few lengths (bucketing: to the next multiple of 16, "
        "`keras.utils.pad_sequences(x, maxlen=n, padding='post')`), with the padding masked "
        "(`mask_zero=True` on the `Embedding`).",
        "keras-step-train": "Keras compiles its jitted `{function}` once per batch shape (a "
        "new trace and a new XLA executable), and {dimension} changes between calls: give "
        "every training step one of a few shapes: pad each batch up to one of a few bucket "
        "sizes (`np.pad` to the next multiple of 64) and give the padded rows "
        "`sample_weight` 0, so that they do not train.",
        "other": "JAX compiles `{function}` once per input shape (a new trace and a new XLA "
        "executable), and {dimension} changes between calls: " + _SHAPES + ".",
    },
    "per-step-overhead": {
        "other": "Your jitted step is called {steps}× per call on tiny batches: batch more "
        "samples per call, or run several steps inside one jitted function "
        "(`jax.lax.scan` over the batches), so the fixed cost of a call is paid once.",
    },
    "model-rebuilt-per-call": {
        "function": "A new jitted function is made on every call (defined inside the "
        "function you call), so it is traced and compiled again each time: define it once, "
        "outside the loop, and call that object.",
        "other": "Build models and jitted functions once, outside the repeated call, and "
        "reuse them.",
    },
    "input-bound": {
        "generator": "A Python generator feeds the model one batch at a time on the "
        "training thread: for in-memory data pass the arrays themselves; otherwise wrap the "
        "work in a `keras.utils.PyDataset` with `workers=4` (and `use_multiprocessing=True` "
        "for CPU-heavy Python) so batches are made while the model trains.",
        "sequence": "The `Sequence` prepares batches on the training thread: make it a "
        "`keras.utils.PyDataset` and pass `workers=4` (and `use_multiprocessing=True` for "
        "CPU-heavy Python) to its `super().__init__(**kwargs)`.",
        "sequence-workers": "The data source already has several workers and still cannot "
        "keep up: `use_multiprocessing=True` for CPU-heavy Python (threads share the GIL), "
        "or make `__getitem__` cheaper (vectorise it, read pre-decoded or cached data).",
        "other": "The model waits for its input: prepare batches in parallel with the step, "
        "in a `keras.utils.PyDataset` with `workers=4` (`use_multiprocessing=True` for "
        "CPU-heavy Python).",
    },
    "conversion-overhead": {
        "float64": "The input is float64: convert it once, up front (`x = "
        "x.astype('float32')`, or `jnp.asarray(x, jnp.float32)` to keep it on the device), "
        "not on every call; Keras models compute in float32 and copy a float64 input on "
        "each call.",
        "python-lists": "Build the input array once (`np.asarray(..., 'float32')`) instead "
        "of passing Python lists on every call.",
        "other": "Convert inputs once, outside the loop (`np.asarray(x, 'float32')`, or "
        "`jnp.asarray` to keep them on the device) and pass the array.",
    },
    "callback-overhead": {
        "user-evaluate": "Your callback calls `model.evaluate`, which sets up a data adapter, "
        "an iterator and its own callbacks on every call: call it less often (`on_epoch_end`, "
        "every N batches), and there `model.test_on_batch(x, y)` on a held batch.",
        "user-predict": "Your callback calls `model.predict`, which sets up a data adapter, "
        "an iterator and its own callbacks on every call: call `model.predict_on_batch(x)` "
        "on a held batch, and less often (`on_epoch_end`, every N batches).",
    },
    "build-dominated": {
        "large-graph": "The one-time cost is tracing `{function}` into a program of {ops} "
        "ops: a Python `for` loop inside a jitted function is unrolled. Loop with "
        "`jax.lax.fori_loop` or `jax.lax.scan` instead, so the program holds the body once.",
    },
    "spikes": {
        "periodic": "Something runs every {period} iterations: a callback, logging or "
        "checkpoint on a batch interval, a data loader refill, or Python's garbage "
        "collector (try `gc.freeze()` after setup, or `gc.disable()` around the loop to "
        "check); move it out of the timed loop or make it cheaper.",
        "other": "Irregular spikes usually come from outside the call: other processes on "
        "the machine, Python's garbage collector (`gc.disable()` around the loop to check), "
        "data loading stalls, or a recompilation (`jax.log_compiles(True)` prints each); "
        "re-run on a quiet machine before judging speed.",
    },
    "drift": {
        "rising-gpu": "Iterations slow down as the run goes on. Check the GPU's temperature "
        "and clocks while it runs (`nvidia-smi -q -d CLOCK,TEMPERATURE`: thermal "
        "throttling), and look for state that grows every iteration: outputs or arrays kept "
        "in a Python list, a growing jit cache (recompiling), a history or metric that is "
        "never reset.",
        "rising": "Iterations slow down as the run goes on: look for state that grows every "
        "iteration: outputs or arrays kept in a Python list, a growing jit cache "
        "(recompiling), a history or metric that is never reset.",
    },
}

#: Titles that name TensorFlow, on JAX.
TITLES: dict[str, str] = {
    "per-call-input-pipeline": "A data adapter, an epoch iterator and callbacks are set up on "
    "every call",
    "per-iteration-tracing": "A jitted function is traced and compiled again on every call",
    "model-rebuilt-per-call": "Built again on every call: a model, layer or jitted function",
}

#: Texts of the TensorFlow table that hold on JAX as they are (no TensorFlow API in them):
#: copied under ``jax:`` for the findings whose ``jax:other`` would otherwise hide them.
SHARED: dict[str, tuple[str, ...]] = {
    "per-call-input-pipeline": ("iterator-per-step",),
    "input-bound": ("pydataset", "pydataset-workers", "iterator-per-step"),
    "per-step-overhead": (
        "keras-train",
        "keras-train-unknown-batch",
        "keras-predict",
        "keras-test",
    ),
    "model-rebuilt-per-call": ("model", "compile"),
}
#: Variants found only on the user's own tf.data pipeline feeding the model (its stages, its
#: ``py_function``): their fix is about that pipeline, so it names tf.data on JAX too.
USES_TF_DATA: dict[str, tuple[str, ...]] = {
    "input-bound": ("py-function", "map-before-batch", "per-element", "read"),
}

#: The variants whose TensorFlow texts hold on JAX too, by finding.
KEPT: dict[str, tuple[str, ...]] = {
    f: (*SHARED.get(f, ()), *USES_TF_DATA.get(f, ())) for f in sorted({*SHARED, *USES_TF_DATA})
}
