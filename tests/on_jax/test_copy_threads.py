"""tfdiag's model copy on Keras-on-JAX is told "no TensorFlow" in its own thread only: another
thread building ``keras.layers.Hashing`` (which needs TensorFlow) meanwhile gets Keras' own
answer (issue 32.14: the copy flipped a process-wide flag and the layer raised "requires
TensorFlow"). In a process of its own: the layer loads TensorFlow, which must never be
loaded for the other JAX tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.jax

_SCRIPT = """
import json, sys, threading
import keras
import numpy as np
from tfdiag.measure.subject import Subject

assert keras.backend.backend() == "jax"
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
model.compile("adam", "mse")
x, y = np.zeros((8, 4), "float32"), np.zeros((8, 2), "float32")
subject = Subject(model, x, y, batch_size=8, flavour="keras3")
subject.copy(compile=True)
first_copy_loaded_tf = "tensorflow" in sys.modules

real_clone = keras.models.clone_model
errors = []

def build_hashing():
    try:
        keras.layers.Hashing(num_bins=3)
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")

def clone_while_another_thread_builds(m, *args, **kwargs):
    thread = threading.Thread(target=build_hashing)  # meanwhile, in another thread
    thread.start()
    thread.join(120)
    return real_clone(m, *args, **kwargs)

keras.models.clone_model = clone_while_another_thread_builds
copy = subject.copy(compile=True)
print(json.dumps({
    "first_copy_loaded_tf": first_copy_loaded_tf,
    "errors": errors,
    "copied": type(copy).__name__,
}))
"""


def test_a_copy_does_not_stop_another_thread_building_a_hashing_layer() -> None:
    env = {**os.environ, "KERAS_BACKEND": "jax", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"first_copy_loaded_tf": False, "errors": [], "copied": "Sequential"}
