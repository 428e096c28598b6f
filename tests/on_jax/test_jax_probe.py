"""Keras 3 on real JAX (tiny models): the header names the backend, TensorFlow stays out, the
compile probe records and explains every jax.jit compilation and leaves JAX as it found it,
and the findings are those of the mechanisms measured in corpus/cases_jax/."""

from __future__ import annotations

import logging
import sys
from functools import partial
from typing import Any

import numpy as np
import pytest

import tfdiag

pytestmark = pytest.mark.jax


def _tiny(keras: Any, *, run_eagerly: bool = False) -> Any:
    model = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", "mse", run_eagerly=run_eagerly)
    return model


def test_a_predict_on_jax_names_its_backend_and_never_loads_tensorflow(keras_jax: Any) -> None:
    model = _tiny(keras_jax)
    x = np.random.rand(32, 4).astype("float32")
    report = tfdiag.profile(model.predict, x, verbose=0, iterations=8)
    env = report.environment
    assert (env.backend, env.version("tensorflow")) == ("jax", None)
    assert env.version("jax") and env.version("jaxlib")
    text = report.render("text", width=200)
    assert "Keras 3 on JAX" in text and "TensorFlow" not in text.split("flavour")[0]
    assert "tensorflow" not in sys.modules
    assert report.probes is None or report.probes.tf_profile is None


def test_keras_callback_pool_is_not_a_callback_finding(keras_jax: Any) -> None:
    """Seed 003's predict on JAX led with callback-overhead 85 % for a predict with no
    callbacks: Keras' thread pool for batch-end callbacks, started by every call."""
    model = _tiny(keras_jax)
    x = np.random.rand(32, 4).astype("float32")
    report = tfdiag.profile(model.predict, x, verbose=0, iterations=8)
    ids = [f.id for f in report.findings]
    assert "callback-overhead" not in ids
    assert ids[0] == "per-call-input-pipeline"
    assert "predict_on_batch" in report.findings[0].fix
    assert "tf." not in report.findings[0].fix


def _listeners() -> list[Any]:
    from jax._src import monitoring  # the public module has no getter

    return monitoring.get_event_duration_listeners()


def test_a_static_argument_recompiling_every_call_is_found_and_explained() -> None:
    import jax
    import jax.numpy as jnp

    @partial(jax.jit, static_argnums=1)
    def update(w: Any, step: int) -> Any:
        return w * 0.9 + step * 0.01

    w = jnp.ones((16, 16))
    count = [0]

    def train() -> Any:
        count[0] += 1
        return update(w, count[0]).block_until_ready()

    seen: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    root = logging.getLogger()
    catch = Catch()
    root.addHandler(catch)
    listeners = len(_listeners())
    try:
        report = tfdiag.profile(train, iterations=4)
    finally:
        root.removeHandler(catch)
    steady = [c for c in report.jit_compiles if c.call > 0 and c.function == "update"]
    assert len(steady) >= 3
    assert {c.cause for c in steady} == {"static"}
    assert all(c.compile_s > 0 and c.trace_s > 0 for c in steady)
    first = report.findings[0]
    assert first.id == "per-iteration-tracing"
    assert "static_argnums" in first.fix
    # JAX is left as it was: no listener, no explanations, nothing in the user's log
    assert len(_listeners()) == listeners
    assert jax.config.jax_explain_cache_misses is False
    assert not [m for m in seen if "TRACING CACHE MISS" in m]
    assert logging.getLogger("jax._src.interpreters.partial_eval").propagate


def test_run_eagerly_on_jax_is_eager_execution(keras_jax: Any) -> None:
    model = _tiny(keras_jax, run_eagerly=True)
    x = np.random.rand(64, 4).astype("float32")
    y = np.random.rand(64, 1).astype("float32")
    report = tfdiag.profile(model.fit, x, y, batch_size=16, epochs=1, verbose=0, iterations=3)
    first = report.findings[0]
    assert first.id == "eager-execution"
    assert "run_eagerly" in first.fix
    assert "tf.function" not in first.fix


def test_compare_on_jax_measures_the_jax_methods_and_leaves_the_model_alone(
    keras_jax: Any,
) -> None:
    model = _tiny(keras_jax)
    x = np.random.rand(32, 4).astype("float32")
    before = [w.copy() for w in model.get_weights()]
    result = tfdiag.compare(model, x, repeats=3)
    names = {m.method for m in result.methods}
    assert names == {"predict", "predict_on_batch", "model(x)", "jit stateless_call"}
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    assert "tensorflow" not in sys.modules


def test_verify_on_jax_measures_the_keras_fixes_and_never_loads_tensorflow(keras_jax: Any) -> None:
    model = _tiny(keras_jax)
    x = np.random.rand(32, 4).astype("float32")
    report = tfdiag.profile(model.predict, x, verbose=0, iterations=6, verify=True)
    # its rank is not this test's business: on a starved CPU the callback pool's wait grows
    # (read as the program's compute) and compute-bound can lead
    found = {f.id: f for f in report.findings}
    v = found["per-call-input-pipeline"].verification
    assert v is not None
    ran = {run.name: run for run in v.variants}
    assert ran["predict_on_batch"].passed
    assert ran["jit stateless_call"].passed  # tf.function's JAX twin, measured instead
    assert "tf.function" not in ran and not any("tf.function" in n for n in v.notes)
    assert "tensorflow" not in sys.modules


def test_the_keras_callback_records_the_compilations_of_its_profiled_batches(
    keras_jax: Any,
) -> None:
    """ProfileCallback starts the compile probe over the batches it profiles, as profile()
    does: a fit whose batches change size compiles Keras' train step once per new shape."""
    import jax

    from tfdiag.keras import ProfileCallback

    sizes = [16, 16, 9, 10, 11, 12, 13, 14, 15, 16, 16, 16]

    class Ragged(keras_jax.utils.PyDataset):  # type: ignore[misc, name-defined]
        def __len__(self) -> int:
            return len(sizes)

        def __getitem__(self, i: int) -> tuple[Any, Any]:
            n = sizes[i]
            return np.ones((n, 4), "float32"), np.ones((n, 1), "float32")

    explain_before = jax.config.jax_explain_cache_misses
    model = _tiny(keras_jax)
    cb = ProfileCallback(batches=(3, 9), tf_profiler=False)
    # shuffle=False: fit shuffles a PyDataset's batch order by default, which put a random
    # number of the new sizes inside the profiled batches (3 of 6 in one run)
    model.fit(Ragged(), epochs=1, verbose=0, callbacks=[cb], shuffle=False)
    report = cb.report
    assert report is not None
    steady = [c for c in report.jit_compiles if c.call > 0]
    # sizes 10–15 in batches 4–9 are new shapes: one compilation each, in its own call
    assert [c.call for c in steady] == [1, 2, 3, 4, 5, 6], report.jit_compiles
    assert all(c.trace_s > 0 and c.compile_s > 0 for c in steady)
    assert jax.config.jax_explain_cache_misses == explain_before  # JAX left as it was
    assert "tensorflow" not in sys.modules
