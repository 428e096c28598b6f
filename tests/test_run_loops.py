"""``tfdiag run`` sees what ``profile()`` sees: a script's single ``fit`` is diagnosed from
inside (TF profiler and callback hook included), and custom training loops are call sites
(the user's ``tf.function`` steps, eager model calls from the user's code)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfdiag.script.fit_probe import batch_range, fit_batches, injectable
from tfdiag.script.instrument import run_script


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def test_batch_range_leaves_half_a_short_fit_to_the_tf_profiler_and_the_timeline() -> None:
    assert batch_range(None, 10) == (2, 12)  # unknown length: the callback's own shape
    assert batch_range(100, 10) == (2, 12)
    assert batch_range(16, 10) == (2, 9)  # 7 steady of 14 after batch 1
    assert batch_range(5, 10) == (1, 3)  # short: batch 1 is the cold one
    assert batch_range(3, 10) == (1, 3)
    assert batch_range(100, 0) == (2, 4)  # at least two steady batches


def test_fit_batches_and_injectable_read_what_keras_gives() -> None:
    assert fit_batches({"steps": 16, "epochs": 2}) == 32
    assert fit_batches({"steps": None, "epochs": 2}) is None

    def fit(x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None):
        return None

    def fake_fit(x=None, epochs=1):
        return None

    assert injectable(fit, (1,), {"callbacks": [object()]})
    assert injectable(fit, (1,), {})
    assert not injectable(fit, (1, 2, 3, 4, 5, []), {})  # callbacks passed positionally
    assert not injectable(fit, (1,), {"callbacks": "nope"})
    assert not injectable(fake_fit, (1,), {})  # a fit that takes no callbacks


SINGLE_FIT = """
import time
import numpy as np
import tensorflow as tf
from tfdiag.measure.seed_models import tiny_model

def slow(v):
    time.sleep(0.002)  # a blocking read, in Python, for every element
    return v

x = np.zeros((256, 4), "float32")
y = np.zeros((256, 1), "float32")
ds = tf.data.Dataset.from_tensor_slices((x, y)).map(
    lambda a, b: (tf.ensure_shape(tf.py_function(slow, [a], tf.float32), (4,)), b)
).batch(8)
model = tiny_model("keras3")
model.fit(ds, epochs=1, verbose=0)
"""


@pytest.mark.tf
def test_a_single_fit_call_is_seen_by_the_tf_profiler_and_the_callback_hook(
    tmp_path: Path,
) -> None:
    result = run_script(write(tmp_path, "train.py", SINGLE_FIT), iterations=4)
    top = result.sites[0]
    report = top.report
    assert top.method == "fit" and top.calls == 1 and report is not None
    assert report.source == "script"
    assert any("diagnosed from inside" in n for n in report.notes), report.notes
    assert report.probes is not None and report.probes.tf_profile is not None
    assert report.py_callbacks and report.py_callbacks[0].function.endswith("slow")
    assert report.findings[0].id == "input-bound"
    # the call as the script made it, not the callback's view of it
    assert report.call.label.endswith(".fit") and ("epochs", "1") in report.call.kwargs


CUSTOM_LOOP = """
import numpy as np
import tensorflow as tf
import keras

x = np.random.rand(8, 16, 4).astype("float32")
y = np.random.rand(8, 16, 1).astype("float32")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.01)

def step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(xb, training=True) - yb) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss

graph_step = tf.function(step)
for i in range(8):
    step(x[i], y[i])
for i in range(8):
    graph_step(x[i], y[i])
model.predict(x[0], verbose=0)
"""


@pytest.mark.tf
def test_custom_loop_steps_and_eager_model_calls_are_call_sites(tmp_path: Path) -> None:
    import keras
    from tensorflow.python.eager.polymorphic_function import polymorphic_function as pf

    before = (pf.Function.__dict__["__call__"], "__call__" in keras.Model.__dict__)
    result = run_script(write(tmp_path, "loop.py", CUSTOM_LOOP), iterations=2)
    assert (pf.Function.__dict__["__call__"], "__call__" in keras.Model.__dict__) == before
    sites = {(s.line, s.label): s.calls for s in result.sites}
    # the eager model call inside step(); the traced one inside graph_step belongs to it
    assert sites[(12, "Sequential.__call__")] == 8
    assert sites[(21, "tf.function.step")] == 8
    # predict's own tf.function and model calls belong to predict
    assert sites[(22, "Sequential.predict")] == 1
    assert len(sites) == 3
    step_site = next(s for s in result.sites if s.label == "tf.function.step")
    assert step_site.report is not None and step_site.report.call.label == "step"
