"""The findings table: every built-in finding as data — id, title, severity bands, the
thresholds its detector reads, the fix text per call kind — and the detector itself.

docs/catalog.md is generated from this table (``python -m tfdiag catalog``). Fix
texts live here only; a finding picks the text for the call kind that was profiled
(``predict``, ``fit``, ``evaluate``, ``on-batch``, ``custom-loop``, ``other``) or for a
variant its detector names.
"""

from __future__ import annotations

from tfdiag.advise import detectors, timeline
from tfdiag.advise.finding import FindingSpec

MEASURE_ON_YOUR_MODEL = (
    " Measure the alternatives on your own model and data: `tfdiag.compare(model, x)` "
    "(`python -m tfdiag compare`) times each and recommends the fastest."
)

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "per-call-input-pipeline",
        "A data adapter / tf.data pipeline is built on every call",
        detectors.per_call_input_pipeline,
        fixes={
            "predict": "For in-memory batches call `model.predict_on_batch(x)` or "
            "`model(x, training=False)` (inside a `tf.function` for repeated calls) instead of "
            "`model.predict(x)`; for many batches make one `predict` call over a "
            "`tf.data.Dataset` built once." + MEASURE_ON_YOUR_MODEL,
            "fit": "Call `fit` once with `epochs=...` over all the data (or over a "
            "`tf.data.Dataset` built once, with `steps_per_epoch`) instead of calling `fit` per "
            "batch; for a custom loop use `train_on_batch(x, y)` or a `tf.function` train step "
            "with `tf.GradientTape`." + MEASURE_ON_YOUR_MODEL,
            "evaluate": "Call `test_on_batch(x, y)` per batch, or one `evaluate` over a "
            "`tf.data.Dataset`." + MEASURE_ON_YOUR_MODEL,
            "on-batch": "`{method}` still wraps each batch in a data iterator; a `tf.function` "
            "step (`tf.GradientTape` for training, `model(x, training=False)` for inference) "
            "called with tensors avoids it, or one `fit`/`predict` over a `tf.data.Dataset`."
            + MEASURE_ON_YOUR_MODEL,
            "other": "Build the input pipeline (`tf.data.Dataset`) once, outside the repeated "
            "call, and iterate over it; for single in-memory batches call the model directly."
            + MEASURE_ON_YOUR_MODEL,
        },
        thresholds={"min_share": 0.10, "min_calls_per_iteration": 0.5},
        when="an input-pipeline function that *builds* a pipeline (an adapter, a dataset, an "
        "iterator: `PIPELINE_BUILDERS` in the catalog) runs ≥ `min_calls_per_iteration` per "
        "steady iteration and its cumulative time is ≥ `min_share` of steady state; reading "
        "the next batch from a pipeline (as inside one `fit`) does not count",
    ),
    FindingSpec(
        "per-iteration-tracing",
        "Graphs are traced on every iteration",
        detectors.per_iteration_tracing,
        fixes={
            "via-data": "The traces are the tf.data functions of the pipeline built on every "
            "call: the fix for `per-call-input-pipeline` removes them too.",
            "other": "Something is retraced on every call: create the `tf.function` once, "
            "outside the loop; pass tensors (not Python numbers) of a fixed shape and dtype; "
            "give it an `input_signature` or `reduce_retracing=True`.",
        },
        thresholds={"min_calls_per_iteration": 0.5},
        when="a tracer (`TRACERS` in the catalog) runs ≥ `min_calls_per_iteration` per steady "
        "iteration",
    ),
    FindingSpec(
        "eager-execution",
        "Ops run eagerly, one Python dispatch each",
        detectors.eager_execution,
        fixes={
            "other": "Run the step as a graph: wrap it in `tf.function` (for a model call, "
            "`tf.function(lambda x: model(x, training=False))`), and do not compile with "
            "`run_eagerly=True`.",
        },
        thresholds={
            "min_ops_per_iteration": 10,
            "max_graph_calls_per_iteration": 1,
            "min_share": 0.05,
        },
        when="≥ `min_ops_per_iteration` eager op dispatches per iteration, fewer than "
        "`max_graph_calls_per_iteration` graph function calls, and their time ≥ `min_share` "
        "of steady state",
    ),
    FindingSpec(
        "build-dominated",
        "One-time build cost dominates",
        detectors.build_dominated,
        fixes={
            "other": "This is one-time cost: make one warm-up call before timing or serving, "
            "keep the model and its compiled functions alive (no `compile()`, "
            "`clear_session()` or model rebuild inside the loop), and judge speed on the "
            "steady state.",
        },
        thresholds={"min_share": 0.5, "cold_ratio": 10, "min_share_when_cold": 0.2},
        when="one-time cost (cold call minus one steady iteration) ≥ `min_share` of profiled "
        "time, or the first call ≥ `cold_ratio` × a later one and ≥ `min_share_when_cold`",
    ),
    FindingSpec(
        "conversion-overhead",
        "Converting data to and from tensors costs time",
        detectors.conversion_overhead,
        fixes={
            "other": "Convert inputs once, outside the loop: `x = tf.convert_to_tensor(x, "
            "tf.float32)` and pass the tensor; keep outputs as tensors when the next step is "
            "TensorFlow.",
        },
        thresholds={"min_share": 0.10},
        when="tensor + output conversion ≥ `min_share` of steady state",
    ),
    FindingSpec(
        "callback-overhead",
        "Callbacks and the progress bar cost time",
        detectors.callback_overhead,
        fixes={
            "other": "Pass `verbose=0` (or `verbose=2`), drop callbacks you don't need, and "
            "raise `steps_per_execution` in `compile()` so callbacks run once per several "
            "batches.",
        },
        thresholds={"min_share": 0.05},
        when="callbacks & progress bar ≥ `min_share` of steady state",
    ),
    FindingSpec(
        "compute-bound",
        "Compute-bound: the time is in op execution",
        detectors.compute_bound,
        fixes={
            "other": "The time is in TensorFlow ops, so Python-side changes won't help: make "
            "the work cheaper (a smaller model or batch, `jit_compile=True` in `compile()`, "
            "mixed precision on a GPU) or run it on faster hardware.",
        },
        thresholds={"min_share": 0.5},
        when="with the TF profiler probe: the model's ops (tf.data's left out) cover ≥ "
        "`min_share` of the wall time and XProf does not call the run input-bound; without "
        "it: op execution ≥ `min_share` of steady state and more than input pipeline + "
        "tracing + conversion",
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
        "(docs/timeline.md)",
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
        "(docs/timeline.md)",
    ),
)
