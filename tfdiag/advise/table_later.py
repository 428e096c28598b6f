"""The findings table's rows after the steady-state causes: the conclusion about what is
left (``compute-bound``), the one-time costs, the line and no-finding fallbacks, and the
patterns of the iteration times. Their order is the table's (:mod:`tfdiag.advise.table`
puts them after its own rows); the module docstring there says how a row is read.
"""

from __future__ import annotations

from tfdiag.advise import costly, jit, keras_jax, timeline, work, xla
from tfdiag.advise.finding import Context, FindingSpec, first_of

LATER: tuple[FindingSpec[Context], ...] = (
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
        "One of your lines takes a large share of each iteration",
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
            "rising-gpu": "Iterations slow down as the run goes on. Check the GPU's "
            "temperature and clocks while it runs (`nvidia-smi -q -d CLOCK,TEMPERATURE`: "
            "thermal throttling), and look for state that grows every iteration: outputs or "
            "tensors kept in a Python list, a growing `tf.function` cache (retracing), a "
            "history or metric that is never reset.",
            "rising": "Iterations slow down as the run goes on: look for state that grows "
            "every iteration: outputs or tensors kept in a Python list, a growing "
            "`tf.function` cache (retracing), a history or metric that is never reset.",
            "other": "Iterations speed up as the run goes on: it had not reached its steady "
            "state. Use more iterations, or leave out the early ones, before judging speed.",
        },
        # Speeding up is a run that had not settled: advice on how to time it, no cause.
        ceilings={"falling": "low"},
        when="a Theil–Sen trend with Mann–Kendall |z| ≥ 3 and ≥ 10 % change over the run "
        "(docs/timeline.md); on a busy machine only when it holds on the iterations with the "
        "least load",
        tier="timing",
    ),
)
