"""The CI guards on real TensorFlow, tiny functions and the seed-003 model: ``max_traces``
around Python ints and tensors, and ``tfdiag diff`` of the ``predict_on_batch`` fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

import tfdiag
from tfdiag.advise.guards import retrace_fix

pytestmark = pytest.mark.tf


def test_max_traces_names_a_function_traced_for_each_python_int() -> None:
    import tensorflow as tf

    @tf.function
    def double(i):
        return i * 2

    with pytest.raises(tfdiag.TooManyTraces) as info:
        with tfdiag.max_traces(1):
            for i in range(5):
                double(i)
    text = str(info.value)
    assert "`test_max_traces_names_a_function_traced_for_each_python_int.<locals>.double`" in text
    assert "test_ci_tf.py:" in text and "was traced 5×" in text
    assert "argument `i` is a Python value that changes: 0, 1, 2, 3, …" in text
    assert f"fix: {retrace_fix('python-value')}" in text
    (found,) = info.value.functions
    assert found.traces == 5 and info.value.limit == 1
    with tfdiag.max_traces(1):
        for i in range(5):
            double(tf.constant(i))


def test_max_traces_as_a_decorator_with_shapes_new_functions_and_variables() -> None:
    import tensorflow as tf

    @tf.function
    def total(x):
        return tf.reduce_sum(x)

    @tfdiag.max_traces(1)
    def shapes() -> None:
        for n in (2, 3):
            total(tf.ones((n, 4)))

    with pytest.raises(tfdiag.TooManyTraces, match="changes shape in dimension 0: 2, 3"):
        shapes()
    with pytest.raises(tfdiag.TooManyTraces, match="a new `tf.function` is made for every call"):
        with tfdiag.max_traces(2):
            for _ in range(3):
                tf.function(lambda x: x + 1)(tf.constant(1))
    v: list[tf.Variable] = []

    @tf.function
    def creates(x):
        if not v:
            v.append(tf.Variable(2.0))
        return x * v[0]

    with tfdiag.max_traces(1):  # traced twice by TensorFlow on its first call: counted once
        for _ in range(3):
            creates(tf.constant(1.0))


def test_max_traces_lets_the_blocks_own_error_through_and_detaches() -> None:
    import tensorflow as tf

    from tfdiag.capture import traces

    module = __import__(traces._MODULE, fromlist=["x"])
    original = getattr(module, traces._TARGET)
    with pytest.raises(ZeroDivisionError):
        with tfdiag.max_traces(0):
            tf.function(lambda x: x)(tf.constant(1))
            1 / 0  # noqa: B018
    assert getattr(module, traces._TARGET) is original


def test_max_traces_tells_long_lived_functions_of_one_source_apart() -> None:
    """Two models' ``predict_on_batch`` and two ``tf.Module`` s: one source each, two
    ``tf.function`` objects traced once each (issue 32.7: failed as "a new tf.function is
    made for every call"). A model built for every call is still caught."""
    import keras
    import tensorflow as tf

    def model() -> keras.Model:
        return keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])

    class Half(tf.Module):
        @tf.function
        def __call__(self, x):
            return x * 2.0

    x = tf.ones((3, 4))
    first, second = model(), model()
    generator, discriminator = Half(), Half()
    with tfdiag.max_traces(1):
        for _ in range(3):
            first.predict_on_batch(x)
            second.predict_on_batch(x)
            discriminator(generator(x))
    with pytest.raises(tfdiag.TooManyTraces, match="a new `tf.function` is made for every call"):
        with tfdiag.max_traces(1):
            for _ in range(3):
                model().predict_on_batch(x)


def test_max_traces_blocks_overlapping_in_two_threads_count_their_own_traces() -> None:
    """Issue 32.5: the second block recorded nothing once the first ended, and a wrapper
    stayed on TensorFlow's tracer."""
    import threading

    import tensorflow as tf

    from tfdiag.capture import traces

    module = __import__(traces._MODULE, fromlist=["x"])
    original = getattr(module, traces._TARGET)

    @tf.function
    def double(i):
        return i * 2

    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def first_block() -> None:
        try:
            with tfdiag.max_traces(1):
                a_in.set()
                b_in.wait(30)
                for _ in range(3):
                    double(tf.constant(1))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        a_out.set()

    thread = threading.Thread(target=first_block)
    thread.start()
    a_in.wait(30)
    with pytest.raises(tfdiag.TooManyTraces, match="was traced 3×"):
        with tfdiag.max_traces(1):
            b_in.set()
            a_out.wait(30)
            for i in range(3):
                double(i)  # a Python int: a new graph each time
    thread.join(30)
    assert errors == []
    assert getattr(module, traces._TARGET) is original


def test_diff_of_the_predict_on_batch_fix(tiny_model_factory, tiny_data, tmp_path: Path) -> None:
    x, _ = tiny_data
    model = tiny_model_factory("keras3")
    before = tfdiag.profile(model.predict, x, verbose=0, iterations=6, tf_profiler=False)
    after = tfdiag.profile(model.predict_on_batch, x, iterations=6, tf_profiler=False)
    b, a = before.save(tmp_path / "before")[0], after.save(tmp_path / "after")[0]
    proc = run_cli("diff", str(b), str(a), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "faster" and doc["ratio"] < 0.5, doc["ratio"]
    assert "per-call-input-pipeline" in [c["id"] for c in doc["resolved"]]
    swapped = run_cli("diff", str(a), str(b), "--fail-if-slower", "1.2")
    assert swapped.returncode == 3, swapped.stdout + swapped.stderr  # 3: slower (1: a crash)
    assert "AFTER is slower than 1.2 × BEFORE" in swapped.stderr


def test_the_gate_re_measures_interleaved_and_orders_the_two_calls() -> None:
    """One run: the unchanged call does not fail a 1.2 gate, three times the ops does.
    benchmarks/ci_gate.py gives the rates beside two CPU-bound processes (docs/ci.md)."""
    import tensorflow as tf

    x = tf.random.stateless_normal((128, 128), seed=(0, 1))

    def chain(n: int):
        @tf.function
        def step():
            y = x
            for _ in range(n):
                y = tf.tanh(y @ x)
            return y

        return step

    base, slowed = chain(4), chain(16)

    def profile(fn):
        return tfdiag.profile(fn, iterations=6, tf_profiler=False, progress=False)

    same = tfdiag.diff(profile(base), profile(base), rerun=(base, base))
    assert not same.slower_than(1.2)
    slow = tfdiag.diff(profile(base), profile(slowed), rerun=(base, slowed))
    assert slow.pairs and slow.slower_than(1.2) and slow.verdict == "slower"
    assert any("re-measured interleaved" in w for w in slow.warnings)
