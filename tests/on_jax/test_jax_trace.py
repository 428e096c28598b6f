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
    assert lead.evidence[0].startswith("JAX profiler: XLA ran the model's ops")
    assert "`conv2d" in lead.evidence[1]


def test_tf_profiler_false_leaves_jax_untraced(keras_jax: Any) -> None:
    model = _conv(keras_jax)
    x = np.random.rand(8, 24, 24, 3).astype("float32")
    report = tfdiag.profile(model.predict_on_batch, x, iterations=4, tf_profiler=False)
    assert report.probes is None or report.probes.jax_profile is None
