"""The timed pass on real JAX under the two drivers that are not ``profile()``: the fit
callback and ``tfdiag run`` trace their block with ``jax.profiler`` (the running backend's
tracer, :mod:`tfdiag.capture.trace_block`) and record the machine's load, as profile() does."""

from __future__ import annotations

import glob
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tfdiag.script import instrument
from tfdiag.script.instrument import run_script

pytestmark = pytest.mark.jax


def _conv(keras: Any) -> Any:
    model = keras.Sequential(
        [
            keras.Input((16, 16, 3)),
            keras.layers.Conv2D(16, 3, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer="sgd", loss="mse")
    return model


def _traces() -> set[str]:
    return set(glob.glob(f"{tempfile.gettempdir()}/tfdiag-jaxtrace-*"))


def test_the_keras_callback_traces_its_block_with_the_jax_profiler(keras_jax: Any) -> None:
    from tfdiag.keras import ProfileCallback

    model = _conv(keras_jax)
    x = np.random.rand(24 * 8, 16, 16, 3).astype("float32")
    y = np.random.rand(24 * 8, 1).astype("float32")
    before = _traces()
    cb = ProfileCallback(batches=(3, 8))  # tf_profiler=None: the running backend's tracer
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[cb])
    report = cb.report
    assert report is not None
    assert "tensorflow" not in sys.modules
    assert _traces() == before  # its folder removed
    assert report.probes is not None and report.probes.tf_profile is None
    trace = report.probes.jax_profile
    # batches 9–13 ran under jax.profiler: each one a traced step
    assert trace is not None and trace.steps == 5
    assert 0 < trace.xla_busy_s <= trace.wall_s
    assert trace.ops and trace.ops[0].module.startswith("jit_")
    assert any("batches 9–13 ran under the JAX profiler" in n for n in report.notes), report.notes
    # 2 before the range and 24 - 13 after the block are the timeline, each with its window
    assert len(report.timing.iteration_s) == 2 + 11
    assert report.machine is not None and len(report.machine.per_iteration) == 13


SCRIPT = """
import keras
import numpy as np

model = keras.Sequential([keras.Input((16, 16, 3)), keras.layers.Conv2D(16, 3),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(1)])
x = np.ones((64, 16, 16, 3), "float32")
for _ in range(12):
    model.predict_on_batch(x)
"""


def test_run_traces_a_jax_site_and_records_the_machine_load(
    keras_jax: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # keras.Model only: tf_keras would load TensorFlow into this process
    monkeypatch.setattr(instrument, "model_classes", lambda: [keras_jax.Model])
    script = tmp_path / "serve.py"
    script.write_text(textwrap.dedent(SCRIPT).lstrip())
    before = _traces()
    result = run_script(script, iterations=4)  # tf_profiler=None: the backend's tracer
    assert result.status == "ok" and "tensorflow" not in sys.modules
    assert _traces() == before
    (site,) = [s for s in result.sites if s.method == "predict_on_batch"]
    report = site.report
    assert site.calls == 12 and report is not None
    # calls 1–5 under cProfile, 6–7 under jax.profiler (traced_steps(4)), 8–12 timed
    assert report.probes is not None and report.probes.jax_profile is not None
    trace = report.probes.jax_profile
    assert trace.steps == 2 and trace.xla_busy_s > 0
    assert any("calls 6–7 ran under the JAX profiler" in n for n in report.notes), report.notes
    assert len(report.timing.iteration_s) == 5
    assert report.machine is not None and len(report.machine.per_iteration) == 5
