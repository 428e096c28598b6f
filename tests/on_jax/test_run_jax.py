"""``tfdiag run`` on a Keras-on-JAX script (real JAX, a tiny model): its profiled calls
record JAX's compilations through the capture session, as profile()'s do, so a call site
that recompiles on every call gets the same per-iteration-tracing finding."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tfdiag.script import instrument
from tfdiag.script.instrument import run_script

pytestmark = pytest.mark.jax

SCRIPT = """
from functools import partial

import jax
import keras
import numpy as np


@partial(jax.jit, static_argnums=1)
def scale(x, step):
    return x * (1.0 + 0.001 * step)


class Scaled(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(4)
        self.step = 0

    def call(self, x):
        self.step += 1  # a Python counter as a static argument: a new compilation per call
        return scale(self.dense(x), self.step)


model = Scaled()
model.compile(jit_compile=False)
x = np.ones((8, 4), "float32")
for _ in range(10):
    model.predict_on_batch(x)
"""


def test_run_records_the_compilations_of_a_recompiling_site(
    keras_jax: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # keras.Model only: tf_keras would load TensorFlow into this process
    monkeypatch.setattr(instrument, "model_classes", lambda: [keras_jax.Model])
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT).lstrip())
    result = run_script(script, iterations=4, tf_profiler=False)
    assert result.status == "ok"
    (site,) = [s for s in result.sites if s.method == "predict_on_batch"]
    assert site.calls == 10 and site.report is not None
    scale = [e for e in site.report.jit_compiles if e.function == "scale"]
    # each of the 4 profiled calls after the first compiled `scale` for its new step; the
    # 5 calls after them ran with no probe attached
    static = {e.call for e in scale if e.cause == "static"}
    assert {1, 2, 3, 4} <= static and max(static) == 4
    # JAX says "positional argument 1"; the recorder names it as the signature does
    assert all(e.argument == "step" for e in scale if e.call)
    lead = next(f for f in site.report.findings if f.id == "per-iteration-tracing")
    assert "static_argnums" in lead.fix
    assert "tensorflow" not in sys.modules


def test_tfdiag_run_does_not_load_tensorflow_into_a_jax_script(tmp_path: Path) -> None:
    """A ``KERAS_BACKEND=jax`` script that never loads TensorFlow gets none from ``tfdiag
    run`` (neither its start-up import nor ``tf_keras``'s). In a process of its own."""
    import os
    import subprocess

    seen = tmp_path / "seen.txt"
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nimport keras\nimport numpy as np\n"
        "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
        "model.predict_on_batch(np.ones((2, 4), 'float32'))\n"
        f"open({str(seen)!r}, 'w').write(str('tensorflow' in sys.modules))\n"
    )
    env = {**os.environ, "KERAS_BACKEND": "jax", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tfdiag",
            "run",
            "--format",
            "json",
            "--iterations",
            "3",
            "--no-tf-profiler",
            str(script),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert seen.read_text() == "False"


STEP_SCRIPT = """
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(1,))
def step(w, scale):
    return w - scale * (jnp.tanh(w @ w.T) @ w)


w = jnp.ones((16, 16)) / 16
for i in range(12):
    w = step(w, 0.1 / (1 + i))  # a decaying step size, static: a compile per value
print(float(w.sum()))
"""


def test_a_jitted_step_of_the_script_that_recompiles_is_its_finding(
    keras_jax: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``jax.jit`` step called from the script is no Keras call site: it had no finding
    at all (tfdiag's own launcher line led "your lines" at 100 %). The whole run's
    compilations are recorded and its line named."""
    monkeypatch.setattr(instrument, "model_classes", lambda: [keras_jax.Model])
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(STEP_SCRIPT).lstrip())
    result = run_script(script, iterations=2, tf_profiler=False)
    assert result.status == "ok"
    steps = [c for c in result.jit_compiles if c.function == "step"]
    static = [c for c in steps if c.cause == "static"]
    assert len(steps) == 12 and len(static) == 11 and {c.argument for c in static} == {"scale"}
    from tfdiag.advise.script import script_findings

    first = script_findings(result)[0].finding
    assert first.remedy == "per-iteration-tracing:jax:static", first
    assert first.line is not None and first.line.line == 14
    assert "`scale` is a static argument" in first.fix
    assert not any(sys.prefix in f"{p.file}" for p in result.lines.places)  # no launcher
