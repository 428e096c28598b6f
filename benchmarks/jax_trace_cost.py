"""The JAX profiler block's cost and what it reads (docs/jax.md, "The JAX profiler's trace").

A two-conv Keras model's ``predict_on_batch`` on 256×24×24×3, profiled with the traced block
(``tf_profiler=None``: on by default on JAX) and without it (``tf_profiler=False``), two
interleaved rounds; prints profile()'s wall, the median call, and what the trace read.

    KERAS_BACKEND=jax PYTHONPATH=. python benchmarks/jax_trace_cost.py
"""

import os
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import tfdiag  # noqa: E402

model = keras.Sequential(
    [
        keras.Input((24, 24, 3)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(4),
    ]
)
x = np.random.rand(256, 24, 24, 3).astype("float32")
model.predict_on_batch(x)
for r in range(2):
    for flag in (False, None):
        t = time.perf_counter()
        rep = tfdiag.profile(model.predict_on_batch, x, iterations=10, tf_profiler=flag)
        wall = time.perf_counter() - t
        jp = rep.probes.jax_profile if rep.probes else None
        extra = (
            f"steps={jp.steps} export={jp.export_s * 1e3:.1f}ms "
            f"busy/wall={jp.xla_busy_s / jp.wall_s:.2f} ops={jp.op_count} top={jp.ops[0].op_name}"
            if jp
            else ""
        )
        first = rep.findings[0].id if rep.findings else None
        print(
            f"round {r} tf_profiler={flag}: profile() {wall:.2f} s, "
            f"median {rep.timing.median_s * 1e3:.1f} ms {extra} first={first}"
        )
