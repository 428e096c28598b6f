"""compare's training methods, accelerate and verify's rewrites on real Keras-on-JAX (tiny
models): each runs on a copy or reads the model only, so the user's weights, optimizer and
compile state are as they were, and TensorFlow is never loaded."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import tfdiag

pytestmark = pytest.mark.jax


def _tiny(keras: Any) -> Any:
    model = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", "mse")
    return model


def _data(n: int = 64) -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    return rng.random((n, 4), dtype="float32"), rng.random((n, 1), dtype="float32")


def _untouched(model: Any, weights: list[Any]) -> None:
    assert all(np.array_equal(a, b) for a, b in zip(weights, model.get_weights()))
    assert int(model.optimizer.iterations) == 0
    assert not model.optimizer.built  # no copy's optimizer was built on the user's model
    assert model.train_function is None  # nor its train step made
    assert "tensorflow" not in sys.modules


def test_compare_times_the_jax_training_methods_on_copies(keras_jax: Any) -> None:
    model = _tiny(keras_jax)
    x, y = _data()
    weights = [w.copy() for w in model.get_weights()]
    result = tfdiag.compare(model, x, y, repeats=2, warmup=1, progress=False)
    train = {m.method: m for m in result.methods if m.kind == "training"}
    assert set(train) == {"fit", "fit per batch", "train_on_batch", "jit train step"}
    for m in train.values():
        assert m.error is None and m.mismatch is None, (m.name, m.error, m.mismatch)
        assert m.loss_after is not None and m.loss_before is not None
        assert m.loss_after < m.loss_before  # each trained its copy
    _untouched(model, weights)


def test_the_jitted_train_step_trains_as_train_on_batch_does(keras_jax: Any) -> None:
    """One step of the jitted step from the same weights lands where one ``train_on_batch``
    lands: it is Keras' training step (loss, gradients, the optimizer), not another one."""
    from tfdiag.measure.methods_jax import jit_train_step
    from tfdiag.measure.subject import Subject

    model = _tiny(keras_jax)
    x, y = _data(16)
    s = Subject(model, x, y, batch_size=16, flavour="keras3")
    a, b = s.copy(compile=True), s.copy(compile=True)
    a.evaluate(x, y, verbose=0)
    b.evaluate(x, y, verbose=0)
    step, held, write_back = jit_train_step(a)
    for _ in range(3):
        _, held[0] = step(held[0], x, y)
        b.train_on_batch(x, y)
    write_back()
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-5, atol=1e-6)
    assert not np.allclose(a.get_weights()[0], model.get_weights()[0])  # it did train
    assert int(a.optimizer.iterations) == 3  # its optimizer state written back
    assert "tensorflow" not in sys.modules


def test_accelerate_on_jax_chooses_among_the_jax_methods_without_tensorflow(
    keras_jax: Any,
) -> None:
    model = _tiny(keras_jax)
    x, _ = _data(16)
    weights = [w.copy() for w in model.get_weights()]
    fast = tfdiag.accelerate(model, x, repeats=2, warmup=1, min_block_s=0.002, max_rows=64)
    at = fast.measured[16]
    assert set(at) == {"predict", "predict_on_batch", "jit stateless_call"}, fast.rejected
    assert fast.method in at
    big = np.random.default_rng(1).random((100, 4), dtype="float32")
    for batch in (x, big):  # 100 rows: past the largest size measured, in chunks
        np.testing.assert_allclose(fast(batch), model.predict(batch, verbose=0), atol=1e-5)
    assert f"accelerate: {fast.method}" in fast.explain()
    _untouched(model, weights)
    # the jitted forward pass reads the model's state at each call, not once when built
    model.set_weights([w + 1.0 for w in weights])
    np.testing.assert_allclose(fast.graph(x), model.predict(x, verbose=0), atol=1e-5)


def test_accelerate_on_jax_refuses_the_wrong_width_in_one_line_and_keeps_the_weights(
    keras_jax: Any,
) -> None:
    """#32: Keras' JAX predict detaches the weights from the model before its first batch and
    leaves them detached when the batch raises: an input of the wrong width made accelerate
    raise, then every later predict of the user's ('NoneType' object is not callable). The
    input is checked first, as on TensorFlow, and a predictor given such an input says so."""
    model = _tiny(keras_jax)
    x, _ = _data(16)
    weights = [w.copy() for w in model.get_weights()]
    narrow = np.zeros((32, 3), "float32")
    with pytest.raises(tfdiag.InputError) as info:
        tfdiag.accelerate(model, narrow, repeats=2, warmup=1, max_rows=16)
    message = str(info.value)
    assert "\n" not in message and "(32, 3)" in message and "(None, 4)" in message
    _untouched(model, weights)
    np.testing.assert_allclose(model.predict(x, verbose=0), np.asarray(model(x)), atol=1e-5)
    fast = tfdiag.accelerate(model, x, repeats=2, warmup=1, min_block_s=0.002, max_rows=16)
    with pytest.raises(tfdiag.InputError, match=r"\(32, 3\).*\(None, 4\)"):
        fast(narrow)
    _untouched(model, weights)
    np.testing.assert_allclose(fast(x), model.predict(x, verbose=0), atol=1e-5)


def test_verify_on_jax_measures_the_jitted_train_step_on_clones_only(keras_jax: Any) -> None:
    """``fit`` per small batch: its fixes (one fit over more epochs, the jitted train step,
    tf.function's train step's twin) run on clones; the user's model trains only in the
    profiled calls themselves, as without verify."""
    x, y = _data(16)
    plain, checked = _tiny(keras_jax), _tiny(keras_jax)
    checked.set_weights(plain.get_weights())
    args = dict(epochs=1, verbose=0, iterations=4)
    tfdiag.profile(plain.fit, x, y, **args)
    report = tfdiag.profile(checked.fit, x, y, verify=True, **args)
    found = {f.id: f for f in report.findings}
    v = found["per-call-input-pipeline"].verification
    assert v is not None and v.skipped is None
    ran = {run.name: run for run in v.variants}
    assert ran["jit train step"].passed, ran["jit train step"].problem
    assert ran["one fit over more epochs"].passed
    assert "tf.function train step" not in ran
    assert "jax.value_and_grad" in ran["jit train step"].fix
    assert int(checked.optimizer.iterations) == int(plain.optimizer.iterations)
    assert "tensorflow" not in sys.modules


def test_verify_on_jax_compiles_an_eager_models_clone(keras_jax: Any) -> None:
    model = keras_jax.Sequential([keras_jax.Input((4,)), keras_jax.layers.Dense(1)])
    model.compile("adam", "mse", run_eagerly=True)
    x, y = _data(32)
    report = tfdiag.profile(
        model.fit, x, y, batch_size=8, epochs=1, verbose=0, iterations=3, verify=True
    )
    v = {f.id: f for f in report.findings}["eager-execution"].verification
    assert v is not None
    ran = {run.name: run for run in v.variants}
    assert ran["compiled as a graph"].passed, ran["compiled as a graph"].problem
    assert model.run_eagerly  # the clone was compiled, not the model
    assert "tensorflow" not in sys.modules


_TFDATA = r"""
import json, sys
from types import SimpleNamespace
import keras, numpy as np, tensorflow as tf
from tfdiag.measure.verify.call import Call
from tfdiag.measure.verify.run import VerifySettings, verify_findings

def slow(x):
    return np.tanh(x.numpy())

def per_sample(xi, yi):
    out = tf.py_function(slow, [xi], tf.float32)
    out.set_shape((4,))
    return out, yi

rng = np.random.default_rng(0)
x, y = rng.random((64, 4), dtype="float32"), rng.random((64, 1), dtype="float32")
ds = tf.data.Dataset.from_tensor_slices((x, y)).map(per_sample).batch(16)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.compile("adam", "mse")
model.fit(ds, epochs=1, verbose=0)
iterations = int(model.optimizer.iterations)
call = Call(model.fit, (ds,), {"epochs": 1, "verbose": 0}, facts={"run_eagerly": "False"})
settings = VerifySettings(warmup=1, repeats=3, min_block_s=0.001)
(v,) = verify_findings(call, [SimpleNamespace(id="input-bound")], settings=settings)
print(json.dumps({
    "backend": keras.backend.backend(),
    "skipped": v.skipped,
    "ran": {r.name: [r.passed, r.problem] for r in v.variants},
    "notes": list(v.notes),
    "untouched": int(model.optimizer.iterations) == iterations,
}))
"""


def test_verify_on_jax_rewrites_the_tf_data_pipeline_a_jax_model_is_fed() -> None:
    """A JAX model fed by tf.data (the program loads TensorFlow itself): the dataset's
    rewrites (parallel map, cache, the bound) run on clones of the model. In a process of its
    own: TensorFlow loaded here would be loaded for every later JAX test."""
    import json
    import os
    import subprocess

    env = {**os.environ, "KERAS_BACKEND": "jax", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", _TFDATA], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["backend"] == "jax" and out["skipped"] is None, out
    for name in ("parallel map + prefetch", "cache", "input bound"):
        assert out["ran"][name][0], (name, out["ran"][name])
    assert not any("not measured" in n for n in out["notes"]), out["notes"]
    assert out["untouched"]
