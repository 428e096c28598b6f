"""The observe pass on real JAX (a tiny conv model): its first block traced with
``jax.profiler``, the XSpace read without TensorFlow into the report's ``jax_profile``, the
traced calls left out of the timing, compute-bound naming the layers' XLA ops."""

from __future__ import annotations

import glob
import sys
import tempfile
from typing import Any

import numpy as np
import pytest

import tfdiag

pytestmark = pytest.mark.jax


def _conv(keras: Any) -> Any:
    return keras.Sequential(
        [
            keras.Input((24, 24, 3)),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(4),
        ]
    )


def test_the_traced_block_on_jax_is_read_from_jax_profiler(keras_jax: Any) -> None:
    model = _conv(keras_jax)
    x = np.random.rand(256, 24, 24, 3).astype("float32")
    before = set(glob.glob(f"{tempfile.gettempdir()}/tfdiag-jaxtrace-*"))
    report = tfdiag.profile(model.predict_on_batch, x, iterations=6)
    assert "tensorflow" not in sys.modules
    assert set(glob.glob(f"{tempfile.gettempdir()}/tfdiag-jaxtrace-*")) == before  # removed
    assert report.probes is not None and report.probes.tf_profile is None
    trace = report.probes.jax_profile
    assert trace is not None and trace.steps == 3
    assert report.timing.traced == 3  # the traced calls are extra, told apart
    assert 0 < trace.xla_busy_s <= trace.wall_s
    assert trace.ops and trace.ops[0].module == "jit_predict_step"
    assert trace.ops[0].category == "convolution"
    assert trace.ops[0].op_name.startswith("jit(predict_step)/conv2d")
    assert any(name == "predict_step" for name, _, _ in trace.jit_calls)
    lead = report.findings[0]
    assert lead.id == "compute-bound", [f.id for f in report.findings]
    # the user's line leads the evidence (an anchored finding); the profiler's figures follow
    assert lead.evidence[0].startswith("line test_jax_trace.py:")
    assert lead.evidence[1].startswith("JAX profiler: XLA ran the model's ops")
    assert "`conv2d" in lead.evidence[2]


def test_tf_profiler_false_leaves_jax_untraced(keras_jax: Any) -> None:
    model = _conv(keras_jax)
    x = np.random.rand(8, 24, 24, 3).astype("float32")
    report = tfdiag.profile(model.predict_on_batch, x, iterations=4, tf_profiler=False)
    assert report.probes is None or report.probes.jax_profile is None


def test_a_keras_step_jax_does_not_explain_gets_its_cause_from_the_shapes(keras_jax: Any) -> None:
    """Keras installed beneath the interpreter's stdlib path (a Docker python image, conda) is
    library code to JAX, which then never explains its steps' misses: the probe's shapes do."""
    import os

    from jax._src import source_info_util as siu

    model = keras_jax.Sequential([keras_jax.Input((4,)), keras_jax.layers.Dense(2)])
    pool = np.random.rand(64, 4).astype("float32")
    sizes = iter(range(3, 64))

    def serve() -> Any:
        return model.predict_on_batch(pool[: next(sizes)])

    path = os.path.dirname(keras_jax.__file__)
    siu.register_exclusion(path)
    try:
        report = tfdiag.profile(serve, iterations=4, tf_profiler=False)
    finally:
        siu._exclude_paths.remove(path)
        siu._exclude_path_regex.cache_clear()
        siu.is_user_filename.cache_clear()
    steady = [c for c in report.jit_compiles if c.call > 0 and c.function == "predict_step"]
    assert len(steady) >= 2, report.jit_compiles  # one per profiled call
    assert all(c.cause == "shape" and c.argument == "data" for c in steady)
    rows = [int(c.now[4:].split(",")[0]) for c in steady]
    assert rows == list(range(rows[0], rows[0] + len(rows)))
    assert all(c.before == f"f32[{n - 1},4]" for c, n in zip(steady, rows, strict=True))
    lead = report.findings[0]
    assert lead.id == "xla-compile-per-shape", [f.id for f in report.findings]
    # requests of varying rows: pad each to a bucket and drop the padded rows' outputs (not
    # a data loader's drop_remainder or one batch_size: this server has neither)
    assert "pad each request" in lead.fix and "drop the padded rows' outputs" in lead.fix
    assert "drop_remainder" not in lead.fix and "batch_size" not in lead.fix
