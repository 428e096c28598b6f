"""The findings table: every built-in finding as data — id, title, severity bands, the
thresholds its detector reads, the fix text per call kind or variant, its ranking tier —
and the detector itself.

docs/catalog.md is generated from this table (``python -m tfdiag catalog``). Fix texts
live here only; a finding picks the text for the variant its detector names, else for
the call kind that was profiled (``predict``, ``fit``, ``evaluate``, ``on-batch``,
``custom-loop``, ``other``), with ``alone`` used when the finding leads the report and no
steady-state finding follows it, ``first`` when it leads ahead of some.
"""

from __future__ import annotations

from dataclasses import replace

from tfdiag.advise import calls, costly, data, graphs, jit, keras_jax, timeline, tracing, work, xla
from tfdiag.advise.finding import Context, FindingSpec, first_of
from tfdiag.advise.fixes_jax import jax_titles, with_jax_fixes

_RETRACE_SHAPE = (
    "Give the `tf.function` `reduce_retracing=True`, or an `input_signature` with `None` for "
    "the dimension that changes (`tf.TensorSpec([None, ...])`); or pad / bucket the inputs to "
    "a few fixed shapes (`drop_remainder=True` for a short last batch)."
)

_ITERATOR_ONCE = (
    "Your code makes a new iterator over the dataset for every batch (`next(iter(ds))`, or "
    "`for x in ds: … break`, inside the loop): each new iterator starts the pipeline from "
    "scratch, refilling its shuffle buffer and prefetch. Create the iterator once (`it = "
    "iter(ds)` outside the loop, with `ds.repeat()` for more than one epoch) and call "
    "`next(it)` in the loop; `num_parallel_calls` and `prefetch` do not remove this cost."
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
            "iterator-per-step": _ITERATOR_ONCE,
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
        "count. On JAX: a Keras `predict`/`fit`/`evaluate` of ≤ `max_steps_per_call` steps "
        "per call whose time outside its jitted step is ≥ `min_jax_share` of steady state",
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
            "`batch_size` to `predict` (e.g. `batch_size=1024`; the outputs do not change), or "
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
        first_of(graphs.eager_execution, keras_jax.eager_step, keras_jax.eager_model_call),
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
    FindingSpec(
        "input-bound",
        "Input-bound: the step waits for its data",
        data.input_bound,
        fixes={
            "py-function": "The pipeline runs Python (`tf.py_function`/`tf.numpy_function`) for "
            "every element, under the GIL: rewrite the transform with TensorFlow ops "
            "(`tf.io.decode_csv`, `tf.strings`, `tf.image`, `tf.math`) so tf.data runs it in "
            "parallel; `num_parallel_calls` alone cannot speed up Python much. Then "
            "`.prefetch(tf.data.AUTOTUNE)` last, and `.cache()` after steps that give the same "
            "result every epoch.",
            "generator": "A Python generator feeds the pipeline one element at a time under the "
            "GIL: for in-memory data use `tf.data.Dataset.from_tensor_slices(arrays)`; otherwise "
            "yield whole batches, or move the work into tf.data transformations with "
            "`num_parallel_calls=tf.data.AUTOTUNE`, and end with `.prefetch(tf.data.AUTOTUNE)`.",
            "pydataset": "The `PyDataset` prepares batches on the training thread: pass "
            "`workers=4` (and `use_multiprocessing=True` for CPU-heavy Python) to it, through "
            "your `__init__`'s `super().__init__(**kwargs)`, so batches are made while the model "
            "trains; Keras 3 ignores these arguments in `fit()`.",
            "pydataset-workers": "The `PyDataset` already has several workers and still "
            "cannot keep up: with threads, Python under the GIL runs one `__getitem__` at a "
            "time, so pass `use_multiprocessing=True` for CPU-heavy Python, or make "
            "`__getitem__` cheaper (vectorise it, read pre-decoded or cached data).",
            "sequence": "The `Sequence` prepares batches on the training thread: tf_keras "
            "takes its workers in `fit()`: `model.fit(seq, workers=4, use_multiprocessing=True)` "
            "(multiprocessing for CPU-heavy Python), so batches are made while the model trains. "
            "The pool is started anew by every `fit` call and stopped at its end, so for `fit` "
            "calls of under a few seconds make `__getitem__` cheaper (vectorise it, cache "
            "decoded data) instead.",
            "sequence-workers": "The `Sequence` already has several workers and still cannot "
            "keep up: pass `use_multiprocessing=True` to `fit()` for CPU-heavy Python (threads "
            "share the GIL), or make `__getitem__` cheaper (vectorise it, read pre-decoded or "
            "cached data).",
            "cpu-shared": "The pipeline's own work runs on the same CPU cores as the model's "
            "ops, every epoch, so each step shares the cores with it: do the work once, where "
            "it gives the same result every epoch: `ds = ds.cache()` after those steps "
            "(windows from `timeseries_dataset_from_array`, decoding, resizing; before random "
            "augmentation and `shuffle`), for the validation data too; or make it cheaper "
            "(`batch()` before a vectorized `map`). More `num_parallel_calls` does not help "
            "when the cores are already busy.",
            "window": "`Dataset.window(n, shift=…)` then `flat_map(lambda w: w.batch(n))` "
            "builds and runs a nested dataset for every window, element by element: frame the "
            "series once instead, `frames = tf.signal.frame(series, n, frame_step=shift)` "
            "(one tensor of all windows), and slice the frames: "
            "`tf.data.Dataset.from_tensor_slices((frames[:, :-1], frames[:, -1:]))"
            ".batch(128).prefetch(tf.data.AUTOTUNE)` (your batch size in place of 128). "
            "`num_parallel_calls` and `prefetch` do not remove the per-window datasets.",
            "map-before-batch": "The `map` function runs once per element, before `batch`: "
            "where it can take a whole batch, batch first and map a vectorized function "
            "(`ds.batch(n).map(f)`); otherwise give it `num_parallel_calls=tf.data.AUTOTUNE`. "
            "Add `.cache()` after expensive steps that give the same result every epoch "
            "(decoding, resizing) and `.prefetch(tf.data.AUTOTUNE)` last.",
            "iterator-per-step": _ITERATOR_ONCE,
            "per-element": "Your loop reads the dataset one element at a time ({elements} "
            "`next()` calls per call), each a round trip from Python into tf.data: `batch()` the "
            "dataset and work on whole batches (a vectorised `map` after `batch`), or run the "
            "loop inside one `tf.function` (`for x in ds:` there, or `ds.reduce`). "
            "`num_parallel_calls` and `prefetch` do not remove the per-element cost.",
            "read": "Reading the files is the bottleneck: read several in parallel "
            "(`interleave(..., num_parallel_calls=tf.data.AUTOTUNE)`), `prefetch(tf.data."
            "AUTOTUNE)`, and `cache()` once decoded if it fits in memory or on local disk.",
            "other": "Parallelise and overlap the pipeline: `map(f, num_parallel_calls="
            "tf.data.AUTOTUNE)`, `.prefetch(tf.data.AUTOTUNE)` as the last step, `.cache()` after "
            "expensive steps that give the same result every epoch (decoding, resizing), and "
            "`batch()` before a vectorized `map` rather than mapping element by element.",
        },
        thresholds={"min_share": 0.10, "min_elements_per_call": 100, "min_pipeline_work": 0.5},
        when="with the TF profiler: XProf's input time (the step waiting for its next batch) "
        "is ≥ `min_share` of the step, or, with no device, tf.data's ops take ≥ "
        "`min_pipeline_work` × the step's wall time on the cores the model needs, and so do "
        "its stages that do the user's work (a `map`, a generator, file reading, Python: not "
        "the slicing, `shuffle` and `batch` every pipeline pays); without it: "
        "reading the next batch, or the user's "
        "data code run by Keras, takes ≥ `min_share` of steady state. A user's loop that calls "
        "the iterator's `next()` ≥ `min_elements_per_call` times per call reads element by "
        "element (the per-element fix)",
    ),
    FindingSpec(
        "conversion-overhead",
        "Converting data to and from tensors costs time",
        data.conversion_overhead,
        fixes={
            "float64": "The input is float64: convert it once, up front (`x = x.astype("
            "'float32')` or `x = tf.convert_to_tensor(x, tf.float32)`), not on every call; Keras "
            "models compute in float32 and copy a float64 input on each call.",
            "float64@line": "Convert the input of `{code}` ({line}) to float32 once, before "
            "the loop (`x = x.astype('float32')`), not on every call: Keras models compute in "
            "float32 and copy a float64 input on each call.",
            "python-lists@line": "Build the input of `{code}` ({line}) as one array once "
            "(`np.asarray(..., 'float32')` or `tf.constant(...)`), before the loop, instead of "
            "passing Python lists on every call.",
            "python-lists": "Build the input tensor once (`tf.constant(...)`, or "
            "`np.asarray(..., 'float32')`) instead of passing Python lists on every call.",
            "other": "Convert inputs once, outside the loop: `x = tf.convert_to_tensor(x, "
            "tf.float32)` and pass the tensor; keep outputs as tensors when the next step is "
            "TensorFlow.",
        },
        thresholds={"min_share": 0.10},
        when="converting the call's own inputs (not an op's arguments) + output conversion ≥ "
        "`min_share` of steady state",
    ),
    FindingSpec(
        "callback-overhead",
        "Callbacks and the progress bar cost time",
        work.callback_overhead,
        fixes={
            "user": "Your callback's `{callback}` runs on every batch, in line with the "
            "steps: move its work to `on_epoch_end`, or do it every N batches "
            "(`if batch % 100 == 0:`).",
            "user@line": "Your callback's `{callback}` runs on every batch, in line with the "
            "steps, and `{code}` ({line}) is its cost: move that line to `on_epoch_end`, or "
            "run it every N batches (`if batch % 100 == 0:`).",
            "checkpoint": "`{callback}` writes the model during the epoch, in line with the "
            "steps: save once per epoch (`ModelCheckpoint(..., save_freq='epoch')`, the "
            "default), or give `save_freq=` a number of batches in the hundreds or thousands; "
            "`save_weights_only=True` makes each save cheaper.",
            "tensorboard": "`{callback}` writes summaries during the epoch: pass "
            "`TensorBoard(update_freq='epoch', histogram_freq=0, profile_batch=0)` (or "
            "`histogram_freq` of several epochs), so it logs once per epoch and does not "
            "profile batches; or raise `steps_per_execution` in `compile()` so its batch hook "
            "runs once per several batches.",
            "user-evaluate@line": "Your callback calls `model.evaluate` on every batch "
            "(`{code}`, {line}), and each call builds a data pipeline, an iterator and its "
            "own callbacks: call it less often (`on_epoch_end`, or every N batches), or pass "
            "`validation_data` and `validation_freq` to `fit`.",
            "user-predict@line": "Your callback calls `model.predict` on every batch "
            "(`{code}`, {line}), and each call builds a data pipeline, an iterator and its "
            "own callbacks: call it less often (`on_epoch_end`, or every N batches), and "
            "there `model(x, training=False)` on the held batch costs less than `predict`.",
            "user-evaluate": "Your callback calls `model.evaluate`, which builds a data pipeline, "
            "an iterator and its own callbacks on every call: evaluate a held batch with "
            "`model.test_on_batch(x, y)` (or a `tf.function` of `model(x, training=False)` and "
            "the loss, built once), less often (`on_epoch_end`, every N batches), or pass "
            "`validation_data` and `validation_freq` to `fit`.",
            "user-predict": "Your callback calls `model.predict`, which builds a data pipeline, "
            "an iterator and its own callbacks on every call: call `model(x, training=False)` "
            "(or `model.predict_on_batch(x)`, or a `tf.function` of it built once) on a held "
            "batch, and less often (`on_epoch_end`, every N batches).",
            "progbar": "`verbose=1` redraws the progress bar every batch: pass `verbose=2` (one "
            "line per epoch) or `verbose=0`.",
            "keras": "`{callback}` does per-batch work: set it to work once per epoch "
            "(its `*_freq` argument), drop it if you don't need it, or raise "
            "`steps_per_execution` in `compile()` so callbacks run once per several batches.",
            "dispatch": "No callback's own code is the cost: it is Keras calling every "
            "callback's batch hooks on every batch. Raise `steps_per_execution` in `compile()` "
            "so the hooks run once per several batches.",
            "other": "Pass `verbose=0` (or `verbose=2`), drop callbacks you don't need, move "
            "per-batch work to `on_epoch_end`, and raise `steps_per_execution` in `compile()` so "
            "callbacks run once per several batches.",
        },
        thresholds={"min_share": 0.05, "min_named_part": 0.25},
        when="everything run by Keras' callback hooks (the user's own callbacks included) and "
        "the progress bar ≥ `min_share` of steady state; when the work below the hooks is < "
        "`min_named_part` of that and the heaviest Keras callback's own code < `min_named_part` "
        "of the hooks' own, the cost is Keras dispatching the hooks (no callback named)",
    ),
    FindingSpec(
        "compute-bound",
        "Compute-bound: the time is in the model's own ops",
        first_of(work.compute_bound, keras_jax.compute_bound),
        fixes={
            "alone": "The time is in the model's own TensorFlow ops (measured with the TF "
            "profiler), so Python-side changes won't help: make the work cheaper "
            "({jit}, mixed precision on a GPU, a smaller model or "
            "input) or run it on faster hardware.",
            "first": "Most of the time is in the model's own TensorFlow ops (measured with "
            "the TF profiler): the Python-side findings below remove only their share of it. "
            "Beyond them, make the ops cheaper ({jit}, mixed "
            "precision on a GPU, a smaller model or input) or run them on faster hardware.",
            "other": "Most of what is left is the model's own ops: after the fixes above, make "
            "them cheaper ({jit}, mixed precision on a GPU, a "
            "smaller model or input).",
            "host-op": "`{api}` inside the compiled step is the cost ({where}): every step "
            "it formats or writes its tensor on the host, one `{op}` op at a time. Print or "
            "write less — a summary (`tf.print(tf.reduce_mean(x))`, `summarize=3`) — or less "
            "often (every N steps under `tf.cond(step % N == 0, ...)`, or from a callback), "
            "or remove it once you are done debugging.",
            "metric": "The metric `{metric}` does most of the step's op work: every update "
            "computes all of its `{setting}` points. Give it fewer `{setting}`, or compute "
            "it once per epoch from held-out predictions instead of on every step.",
            "graph-loop": "`{api}` in {where} loops over the batch inside the graph, one "
            "iteration per element, each running its small ops one at a time: write the "
            "per-element function for the whole batch (batched ops, `tf.einsum`, "
            "broadcasting), or replace `tf.map_fn(fn, x)` by `tf.vectorized_map(fn, x)`, "
            "which vectorises it; {jit} can fuse what is left.",
        },
        thresholds={
            "min_share": 0.5,
            "max_input_wait": 0.2,
            "min_host_op_share": 0.1,
            "min_loop_share": 0.3,
            "min_loop_iterations": 16,
            "min_loop_graph_share": 0.3,
            "min_metric_share": 0.3,
        },
        tier="conclusion",
        when="with the TF profiler only: the model's own ops (tf.data's, Python ops and "
        "collectives left out) cover ≥ `min_share` of the wall time and the step waits for "
        "input less than `max_input_wait`; on JAX, the XLA ops in the JAX profiler's trace "
        "(their union over threads) cover ≥ `min_share` of the wall time, the heaviest named "
        "by the Keras layer of their jaxpr path (without a trace: Keras' jitted step and "
        "Python's waits for its results ≥ `min_share` of steady state); it says "
        "Python-side changes won't help only when no steady-state finding is reported beside "
        "it. Inside the graph, named by its op scope "
        "(and the user's layer): ops that do none of the model's math (`HOST_OPS` in the "
        "catalog: `tf.print`, summaries) ≥ `min_host_op_share` of the iteration, or a loop's "
        "ops (`tf.map_fn`: `PER_ELEMENT_LOOPS`, not a recurrent layer's loop over time) run ≥ "
        "`min_loop_iterations` per graph call, "
        "≥ `min_loop_share` of the model's op time, with the graph calls ≥ "
        "`min_loop_graph_share` of steady state",
    ),
    FindingSpec(
        "build-dominated",
        "One-time build cost dominates",
        work.build_dominated,
        fixes={
            "large-graph": "The one-time cost is tracing `{function}` into a graph of {ops} "
            "ops: a Python `for` loop over `range(n)` (or a list) inside a `tf.function` is "
            "unrolled, every step's ops copied into the graph. Loop with `tf.range` instead "
            "(`for t in tf.range(n):` — AutoGraph turns it into one `tf.while_loop`), carrying "
            "the loop's state in tensors (`tf.TensorArray` for per-step outputs); the graph "
            "then holds the body once.",
            "other": "This is a one-time cost, paid once per process and not per call: make "
            "one warm-up call before timing or serving, and judge speed on the steady state "
            "(the report's median does).",
        },
        ceilings={"other": "low"},
        thresholds={
            "min_share": 0.5,
            "cold_ratio": 10,
            "min_share_when_cold": 0.2,
            "large_graph_ops": 500,
            "unrolled_repeats": 100,
        },
        tier="one-time",
        when="one-time cost (cold call minus one steady iteration) ≥ `min_share` of profiled "
        "time, or the first call ≥ `cold_ratio` × a later one and ≥ `min_share_when_cold`; a "
        "user function traced into a graph of ≥ `large_graph_ops` ops, one of them repeated "
        "≥ `unrolled_repeats`× in one scope (`mul`, `mul_1`, …), names its unrolled loop",
    ),
    FindingSpec(
        costly.COSTLY_LINE,
        "One of your lines takes most of each iteration",
        costly.costly_line,
        fixes={
            "other": "No rule of tfdiag names this API's cost, so start at this line: "
            "`tfdiag.profile(..., sampling=True)` shows the stacks below it, and the table "
            "above which of its functions take the time.",
        },
        thresholds={"min_share": 0.25},
        bands=(0.5, 0.25),
        when="no other finding is reported (it is dropped when one is), "
        "and one of your lines has ≥ `min_share` of steady-state time below it: the line, its "
        "API and the remedy of the API's nature (`tfdiag catalog`: the natures)",
    ),
    FindingSpec(
        work.NO_FINDING,
        "No known slow pattern: where the time went",
        work.where_the_time_went,
        fixes={
            "other": "None of tfdiag's findings applies: no known slow pattern crosses its "
            "threshold, so the time above is spread over the model's ops and the code around "
            "them. Start from the largest share: for op time, a smaller model or input, "
            "`jit_compile=True`, or faster hardware; for your own code, "
            "`tfdiag.profile(..., sampling=True)` shows whole stacks; "
            "`tfdiag.compare(model, x)` times other ways of calling the model on your data.",
        },
        bands=(2.0, 2.0),
        tier="conclusion",
        when="no other finding is reported (it is dropped when one is): the steady state's "
        "split by category, the TF profiler's op and input shares, the eager ops and your "
        "heaviest function, with why no finding applies",
    ),
    FindingSpec(
        "warmup",
        "Warm-up: the first iterations are slower",
        timeline.warmup,
        fixes={
            "other": "Leave the first {iterations} iteration(s) out when you time this call "
            "(medians already do), and make as many warm-up calls before serving or "
            "benchmarking. A warm-up longer than one call means something is still built after "
            "the first call: inputs whose shape or dtype changes between calls (retracing), or "
            "lazily created state.",
        },
        ceilings={"other": "low"},
        tier="one-time",
        when="the first timed iteration would count as a spike and the ones after it stay "
        "above the steady band (docs/timeline.md)",
    ),
    FindingSpec(
        "spikes",
        "Spikes: some iterations take far longer",
        timeline.spikes,
        fixes={
            "periodic": "Something runs every {period} iterations: a callback, logging or "
            "checkpoint on a batch interval, a tf.data buffer or prefetch refill, or Python's "
            "garbage collector (try `gc.freeze()` after setup, or `gc.disable()` around the "
            "loop to check); move it out of the timed loop or make it cheaper.",
            "other": "Irregular spikes usually come from outside the call: other processes on "
            "the machine, Python's garbage collector (`gc.disable()` around the loop to check), "
            "or data loading stalls; pin threads (`tf.config.threading`) and re-run on a quiet "
            "machine before judging speed.",
        },
        when="iterations ≥ 50 % and 5 robust standard deviations above the expected time "
        "(docs/timeline.md); on a busy machine only when they recur at the program's own "
        "period",
        tier="timing",
    ),
    FindingSpec(
        "xla-compile-per-shape",
        "XLA compiles the step again for every new input shape",
        first_of(xla.xla_compile_per_shape, jit.compile_per_shape),
        fixes={
            "other": "With `jit_compile=True` XLA compiles `{function}` once per concrete "
            "input shape, and {dimension} changes between calls. Give it a few fixed shapes: "
            "batch with `drop_remainder=True` (`dataset.batch(n, drop_remainder=True)`), pad "
            "each batch up to one of a few bucket sizes "
            "(`tf.data.Dataset.bucket_by_sequence_length`, or pad to the next multiple of "
            "32 with `tf.pad`), or cut requests into chunks of one size. Where the shapes "
            "must stay dynamic, compile without XLA: `model.compile(..., jit_compile=False)` "
            "(Keras), `@tf.function(jit_compile=False)` (a custom step).",
        },
        thresholds={"min_share": 0.2, "min_steps_share": 0.5},
        when="the TF profiler's trace holds XLA compilations (`*Compiler::RunBackend` events) "
        "in ≥ `min_steps_share` of the traced iterations and they take ≥ `min_share` of "
        "those iterations' time; on JAX, a jitted function compiled ≥ 0.5× per steady "
        "iteration for a new input shape (JAX's cache-miss explanation, or for a Keras step "
        "JAX does not explain the shapes of the arrays that reached it), ≥ `min_share` of "
        "steady state",
    ),
    FindingSpec(
        "drift",
        "Drift: iteration times trend over the run",
        timeline.drift,
        fixes={
            "rising": "Iterations slow down as the run goes on. On a GPU check its temperature "
            "and clocks while it runs (`nvidia-smi -q -d CLOCK,TEMPERATURE`: thermal "
            "throttling); otherwise look for state that grows every iteration: outputs or "
            "tensors kept in a Python list, a growing `tf.function` cache (retracing), a "
            "history or metric that is never reset.",
            "other": "Iterations speed up as the run goes on: it had not reached its steady "
            "state. Use more iterations, or leave out the early ones, before judging speed.",
        },
        when="a Theil–Sen trend with Mann–Kendall |z| ≥ 3 and ≥ 10 % change over the run "
        "(docs/timeline.md); on a busy machine only when it holds on the iterations with the "
        "least load",
        tier="timing",
    ),
)

#: Each row with its fix texts on JAX beside the TensorFlow ones (advise/fixes_jax.py).
FINDINGS = tuple(
    replace(s, fixes=with_jax_fixes(dict(s.fixes), s.id), titles=jax_titles(s.id)) for s in FINDINGS
)
