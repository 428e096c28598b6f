"""The findings table: every built-in finding as data — id, title, severity bands, the
thresholds its detector reads, the fix text per call kind or variant, its ranking tier —
and the detector itself.

The causes in the calls and graphs are here, what runs around the step (the pipeline,
conversions, callbacks) in :mod:`tfdiag.advise.table_around`, the rest (the conclusion,
one-time costs, timing patterns) in :mod:`tfdiag.advise.table_later`, in that order.
docs/catalog.md is generated from the table (``python -m tfdiag catalog``). Fix texts live
in its rows only; a finding picks the text for the variant its detector names, else for
the call kind that was profiled (``predict``, ``fit``, ``evaluate``, ``on-batch``,
``custom-loop``, ``other``), with ``alone`` used when the finding leads the report and no
steady-state finding follows it, ``first`` when it leads ahead of some.
"""

from __future__ import annotations

from tfdiag.advise import calls, graphs, jit, keras_jax, tracing
from tfdiag.advise.finding import Context, FindingSpec, first_of
from tfdiag.advise.fixes import with_overlays
from tfdiag.advise.table_around import AROUND
from tfdiag.advise.table_later import LATER
from tfdiag.advise.texts import ITERATOR_ONCE

_RETRACE_SHAPE = (
    "Give the `tf.function` `reduce_retracing=True`, or an `input_signature` with `None` for "
    "the dimension that changes (`tf.TensorSpec([None, ...])`); or pad / bucket the inputs to "
    "a few fixed shapes (`drop_remainder=True` for a short last batch)."
)


FINDINGS: tuple[FindingSpec[Context], ...] = (
    FindingSpec(
        "per-call-input-pipeline",
        "A data adapter / tf.data pipeline is built on every call",
        first_of(keras_jax.per_call_overhead, calls.per_call_input_pipeline),
        fixes={
            "predict": "`model.predict` builds a data pipeline, callbacks and output buffers on "
            "every call. For in-memory batches call `model.predict_on_batch(x)` instead of "
            "`model.predict(x)`, or `model(x, training=False)` inside a `tf.function` built "
            "once.",
            "fit": "Each `fit` call builds a data pipeline and callbacks: for one batch at a "
            "time call `model.train_on_batch(x, y)` instead of `fit`, or gather the batches "
            "and make one `fit` call over all of them.",
            "evaluate": "Each `evaluate` call builds a data pipeline and callbacks: call "
            "`model.test_on_batch(x, y)` per batch instead.",
            "on-batch": "`{method}` still wraps each batch in a data handler: call the model "
            "in a `tf.function` built once instead, with tensors.",
            "iterator-per-step": ITERATOR_ONCE,
            "other": "Build the input pipeline (`tf.data.Dataset`) once, outside the repeated "
            "call, and iterate over it.",
        },
        thresholds={
            "min_share": 0.10,
            "min_calls_per_iteration": 0.5,
            "min_jax_share": 0.3,
            "max_steps_per_call": 8,
        },
        when="an input-pipeline function that *builds* a pipeline (an adapter, a dataset, an "
        "iterator: the catalog's `pipeline-builder` role) runs ≥ `min_calls_per_iteration` per "
        "steady iteration, not once per epoch, and its cumulative time is ≥ `min_share` of "
        "steady state; reading the next batch from a pipeline (as inside one `fit`) does not "
        "count, nor one Keras call of more than `max_steps_per_call` steps your code does not "
        "make in a loop (its set-up is paid once). On JAX: a Keras `predict`/`fit`/`evaluate` "
        "of ≤ `max_steps_per_call` steps per call whose time outside its jitted step is ≥ "
        "`min_jax_share` of steady state",
    ),
    FindingSpec(
        "per-epoch-overhead",
        "Many short epochs: starting each epoch costs more than its steps",
        calls.per_epoch_overhead,
        fixes={
            "validation": "Each `fit` runs {epochs} epochs of {steps} step(s) and validates after "
            "every one ({validation_steps} validation step(s), a new iterator and the test "
            "callbacks each time): pass `validation_freq=N` to `fit` to validate every N epochs "
            "(or fewer `validation_steps`), and use fewer, longer epochs: repeat the data "
            "(`ds.repeat()`) and set `steps_per_epoch`, or divide `epochs` accordingly.",
            "other": "Each `fit` runs {epochs} epochs of {steps} step(s): every epoch re-creates "
            "the data iterator and runs the epoch callbacks. Use fewer, longer epochs: repeat the "
            "data (`ds.repeat()`, or `np.tile` for arrays) and set `steps_per_epoch`, or divide "
            "`epochs` accordingly; run validation and checkpoints every N epochs.",
        },
        thresholds={"min_epochs": 4, "max_steps_per_epoch": 4, "min_share": 0.3},
        when="one `fit` runs ≥ `min_epochs` epochs of ≤ `max_steps_per_epoch` steps, and the "
        "time outside the step function is ≥ `min_share` of steady state",
    ),
    FindingSpec(
        "per-step-overhead",
        "Many tiny steps: each step's fixed cost outweighs its work",
        calls.per_step_overhead,
        fixes={
            "keras-train": "Each of the {steps} steps per epoch pays a fixed Python cost (a graph "
            "call, callbacks, logs) that dwarfs its batch. Run many steps per graph call with "
            "`model.compile(..., steps_per_execution=32)`, and use a larger `batch_size` where "
            "training allows ({batch_size} now).",
            "keras-train-unknown-batch": "Each of the {steps} steps per epoch pays a fixed "
            "Python cost (a graph call, callbacks, logs) that dwarfs its batch. Run many steps "
            "per graph call with `model.compile(..., steps_per_execution=32)`, and use larger "
            "batches where training allows (`batch_size=` in `fit`, or `ds.batch(...)`).",
            "keras-train-dataset": "Each of the {steps} steps per epoch pays a fixed Python "
            "cost (a graph call, callbacks, logs) that dwarfs its batch, and the batches are "
            "your dataset's (`fit` ignores `batch_size` for a dataset): batch it larger where "
            "you build it, where training allows (`ds = ds.unbatch().batch(256)`, or "
            "`.batch(256)` in place of the small batch), and run many steps per graph call "
            "with `model.compile(..., steps_per_execution=32)`.",
            "keras-predict-dataset": "Each of the {steps} steps per call runs a tiny batch, "
            "and the batches are your dataset's (`predict` ignores `batch_size` for a "
            "dataset): batch it larger where you build it (`ds = ds.unbatch().batch(1024)`, "
            "or `.batch(1024)` in place of the small batch; the outputs are the same rows), "
            "or `model.compile(..., steps_per_execution=...)`.",
            "keras-test-dataset": "Each of the {steps} steps per call runs a tiny batch, and "
            "the batches are your dataset's (`evaluate` ignores `batch_size` for a dataset): "
            "batch it larger where you build it (`ds = ds.unbatch().batch(1024)`), or "
            "`model.compile(..., steps_per_execution=...)`.",
            "keras-predict": "Each of the {steps} steps per call runs a tiny batch: pass a larger "
            "`batch_size` to `predict` (e.g. `batch_size={larger}`; the outputs do not change), or "
            "`model.compile(..., steps_per_execution=...)`.",
            "keras-test": "Each of the {steps} steps per call runs a tiny batch: pass a larger "
            "`batch_size` to `evaluate`, or `model.compile(..., steps_per_execution=...)`.",
            "other": "Your `tf.function` step is called {steps}× per call on tiny batches: batch "
            "more samples per call, or run several steps inside one `tf.function` (a `tf.range` "
            "loop over the batches), so the fixed cost of a call is paid once.",
        },
        thresholds={"min_steps_per_iteration": 16, "min_overhead_share": 0.5, "max_step_s": 0.01},
        when="≥ `min_steps_per_iteration` Keras steps per epoch (or graph function calls per "
        "call in a custom loop) of at most `max_step_s` each, and the model's own work (TF "
        "profiler: op time, input waits, Python ops) is less than 1 − `min_overhead_share` of "
        "the time",
    ),
    FindingSpec(
        "model-rebuilt-per-call",
        "Built again on every call: a model, layer, table or tf.function",
        first_of(calls.model_rebuilt_per_call, jit.rebuilt_function),
        fixes={
            "model": "A model is built, loaded or compiled on every call, and everything Keras "
            "built for the last one (its graphs, its compiled step) is thrown away. Build or load "
            "it once, outside the loop, and reuse it (`set_weights` to change its weights).",
            "compile": "`compile()` runs on every call, and each compile throws away the "
            "train step Keras traced, so it is traced again. Compile once, outside the loop, "
            "and change a hyper-parameter on the compiled model instead: "
            "`model.optimizer.learning_rate.assign(new_lr)`.",
            "weights": "`load_weights` runs on every call: each one reads the weights file and "
            "assigns every weight again. Load them once, at start-up, and reuse the model; to "
            "serve the newest checkpoint, reload only when the file changed (keep "
            "`os.path.getmtime(path)` and compare it).",
            "new-optimizer": "A new optimizer is made on every call, and with it a new "
            "`tf.function` step (a traced step cannot create a new optimizer's variables), so "
            "the step is traced again and the optimizer's state starts from zero. Make the "
            "optimizer and the `tf.function` step once, outside the loop, and change the "
            "learning rate on that optimizer: `optimizer.learning_rate = new_lr` before the "
            "epoch (it assigns the optimizer's variable, which the traced step reads).",
            "function": "A new `tf.function` is made on every call (defined inside the function "
            "you call), so it is traced again each time: define the `tf.function` once, outside "
            "the loop, and call that object.",
            "other": "Build models and `tf.function`s once, outside the repeated call, and "
            "reuse them.",
        },
        thresholds={"min_share": 0.10, "min_calls_per_iteration": 0.5},
        when="one of your lines calls a build-type API (a constructor or a setup call: "
        "the `construct` and `setup` natures, by the API table or the name) ≥ "
        "`min_calls_per_iteration` per iteration; or a Keras model constructor, `load_model`, "
        "`load_weights`, `clone_model` or `compile` (the `model-builder` role) runs ≥ "
        "`min_calls_per_iteration` per iteration, or the same user function is traced again "
        "with the same argument types on most calls; its time is ≥ `min_share`; an "
        "optimizer constructed as often names the learning-rate fix",
    ),
    FindingSpec(
        "per-iteration-tracing",
        "Graphs are traced on every iteration",
        first_of(tracing.per_iteration_tracing, jit.per_iteration_compiles),
        fixes={
            "python-value": "Pass the changing value as a tensor (`tf.constant(i)`): a Python "
            "number is part of a graph's signature, so each new one is a new graph; a tensor is an "
            "input of the same graph.",
            "python-value@line": "Pass the `{argument}` argument as a tensor at {line} "
            "(`{code}`): wrap the value in `tf.constant(...)`. A Python number is part of a "
            "graph's signature, so each new value is a new graph; a tensor is an input of the "
            "same graph.",
            "python-structure@line": "Pass the `{argument}` argument as a tensor "
            "(`tf.constant(...)`), or a fixed-length tuple of tensors, at {line} (`{code}`): "
            "a Python list or dict whose contents change is a new graph each time.",
            "python-structure": "Pass a tensor (`tf.constant(values)`) or a fixed-length tuple "
            "of tensors instead of a Python list or dict whose contents change.",
            "shape": _RETRACE_SHAPE,
            "keras-shape": "Keras traces its step again for each new input shape: keep the "
            "batch shape fixed (`drop_remainder=True`, pad the last batch) or bucket inputs to "
            "a few shapes. " + _RETRACE_SHAPE,
            "dtype": "Cast the inputs to one dtype (`tf.cast`, `.astype('float32')`) before the "
            "call: each dtype is a new graph.",
            "new-function": "The `tf.function` is made anew on every call: define it once, "
            "outside the loop, and call that object (see `model-rebuilt-per-call`).",
            "new-function-alone": "The `tf.function` is made anew on every call: define it "
            "once, outside the loop, and call that object.",
            "recompiled": "The traces are Keras' step functions, dropped by the `compile()` "
            "run on every call: the fix for `model-rebuilt-per-call` removes them.",
            "recompiled-alone": "The traces are Keras' step functions, dropped by the "
            "`compile()` run on every call: compile once, outside the loop, and change a "
            "hyper-parameter on the compiled model "
            "(`model.optimizer.learning_rate.assign(new_lr)`).",
            "new-model": "The traces are the step functions of a model made anew before "
            "every call: the fix for `model-rebuilt-per-call` removes them.",
            "new-model-alone": "The traces are the step functions of a model made anew "
            "before every call (a new model has none traced): build it once, outside the "
            "loop, and copy weights into it with `set_weights`.",
            "via-data": "The traces are the tf.data functions of the pipeline built on every "
            "call: the fix for `per-call-input-pipeline` removes them too.",
            "via-data-alone": "The traces are the tf.data functions of an input pipeline built "
            "again on every call (each `fit`/`predict`/`evaluate` call on arrays builds one): "
            "make fewer, longer calls, or build the `tf.data.Dataset` once and pass it.",
            "other": "Something is retraced on every call: create the `tf.function` once, "
            "outside the loop; pass tensors (not Python numbers) of a fixed shape and dtype; "
            "give it an `input_signature` or `reduce_retracing=True`.",
        },
        thresholds={"min_calls_per_iteration": 0.5},
        when="a tracer (the catalog's `tracer` role) runs ≥ `min_calls_per_iteration` per steady "
        "iteration; the cause is read from the recorded traces (which argument, which "
        "dimension, a new function object, tf.data's functions)",
    ),
    FindingSpec(
        "eager-execution",
        "Ops run eagerly, one Python dispatch each",
        first_of(
            graphs.eager_execution,
            keras_jax.eager_step,
            keras_jax.eager_model_call,
            keras_jax.eager_ops,
        ),
        fixes={
            "run-eagerly": "The model is compiled with `run_eagerly=True`, a debugging setting: "
            "compile it without it (`model.compile(..., run_eagerly=False)`, the default) so "
            "`fit`/`predict`/`evaluate` run their step as a graph.",
            "run-functions-eagerly": "`tf.config.run_functions_eagerly(True)` is on, so every "
            "`tf.function` runs as plain Python: turn it off "
            "(`tf.config.run_functions_eagerly(False)`).",
            "around-graph": "A graph function runs on every iteration, but `{entry}` runs "
            "eagerly beside it, one op at a time from Python: move that work into the "
            "`tf.function`, or do it less often.",
            "build-ops": "These eager ops are `{entry}`'s own work, a build or set-up call "
            "made on every iteration: doing it once, as `model-rebuilt-per-call` says, "
            "removes them.",
            "train-step": "Decorate your train step with `@tf.function`, so one graph call "
            "runs the forward pass, the loss, `tape.gradient` and `apply_gradients`; keep "
            "printing and `.numpy()` calls outside it.",
            "model": "Call the model through a `tf.function` built once, `predict_fn = "
            "tf.function(lambda x: model(x, training=False))`, and call `predict_fn(x)` on "
            "every iteration: called directly, every layer runs its ops one at a time.",
            "other": "Put the work done on every call in a function decorated with "
            "`@tf.function`, built once: one graph call then runs its ops, instead of one "
            "Python dispatch each.",
        },
        thresholds={
            "min_ops_per_iteration": 10,
            "max_graph_calls_per_iteration": 1,
            "min_share": 0.10,
            "dispatch_s": 25e-6,
        },
        when="≥ `min_ops_per_iteration` eager op dispatches per iteration and fewer than "
        "`max_graph_calls_per_iteration` graph function calls; impact: the steady-state share "
        "outside the ops' kernels (their dispatch time less `dispatch_s` per op) and outside "
        "what other findings account for (≥ `min_share`). Beside graph calls, by volume: the "
        "eager ops' cost (their op wrappers' time, or the TF/Keras calls the user's code makes "
        "that dispatch them, a model called eagerly per step, less the kernels) ≥ `min_share`",
    ),
    FindingSpec(
        "python-in-graph",
        "Python runs inside the step's graph (py_function / numpy_function)",
        graphs.python_in_graph,
        fixes={
            "other": "Rewrite the Python function with TensorFlow ops (`tf.math`, `tf.strings`, "
            "`tf.image`, `tf.signal`...) so it runs inside the graph: a `tf.py_function` or "
            "`tf.numpy_function` stops the graph on every call, takes the GIL and cannot be "
            "compiled. If it must stay in Python, call it less often (a metric once per epoch) "
            "or outside the step.",
        },
        thresholds={"min_share": 0.10},
        when="with the TF profiler: `PyFunc`/`EagerPyFunc` ops outside tf.data's threads take "
        "≥ `min_share` of the step",
    ),
)

#: Each row with every other backend's fix texts and titles beside the TensorFlow ones
#: (its overlay in advise/fixes/).
FINDINGS = tuple(with_overlays(s) for s in (*FINDINGS, *AROUND, *LATER))
