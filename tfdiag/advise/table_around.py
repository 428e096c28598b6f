"""The findings table's rows for what runs around the step: the input pipeline, the
conversions of the call's data, the callbacks. In the table's order after the rows of
:mod:`tfdiag.advise.table` (whose docstring says how a row is read)."""

from __future__ import annotations

from tfdiag.advise import data, work
from tfdiag.advise.finding import Context, FindingSpec
from tfdiag.advise.texts import ITERATOR_ONCE

AROUND: tuple[FindingSpec[Context], ...] = (
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
            "iterator-per-step": ITERATOR_ONCE,
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
            "inputs@line": "Convert the input of `{code}` ({line}) once, before the loop "
            "(`x = tf.convert_to_tensor(x, tf.float32)`), and pass the tensor: each call "
            "converts the same array again.",
            "inputs": "Convert inputs once, outside the loop: `x = tf.convert_to_tensor(x, "
            "tf.float32)` and pass the tensor, instead of converting the same array on every "
            "call.",
            "outputs@line": "`{code}` ({line}) copies its outputs back to NumPy (or Python "
            "numbers) on every call: where the next step is TensorFlow, keep them as tensors "
            "(call the model, `model(x, training=False)`, which returns tensors).",
            "outputs": "The call copies its outputs back to NumPy (or Python numbers) on every "
            "call: where the next step is TensorFlow, keep them as tensors (call the model, "
            "`model(x, training=False)`, which returns tensors).",
            "logs@line": "`{code}` ({line}) turns the step's metrics into Python numbers on "
            "every call, which waits for the step to finish: train with `fit`, or write the "
            "step as a `tf.function` of your own whose metrics stay tensors until you read "
            "them every N steps.",
            "logs": "The call turns the step's metrics into Python numbers on every call, "
            "which waits for the step to finish: train with `fit`, or write the step as a "
            "`tf.function` of your own whose metrics stay tensors until you read them every "
            "N steps.",
            "other": "Convert inputs once, outside the loop, and keep outputs as tensors where "
            "the next step is TensorFlow.",
        },
        thresholds={"min_share": 0.10},
        when="converting the call's own inputs (not an op's arguments) + output conversion ≥ "
        "`min_share` of steady state; under `tfdiag run`, inputs that are new objects on "
        "every later call (a server's requests) are not counted",
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
)
