"""The one hook on TensorFlow's tracer and ``max_traces`` blocks in threads, on a fake
``tracing_compilation`` module: no TensorFlow.

Issue 32.5: two overlapping blocks in two threads each wrapped TensorFlow's tracer and put
back what they found, so the second recorded nothing and passed, and the first's wrapper
stayed for good. Issue 32.7: two long-lived ``tf.function`` s of one source failed
``max_traces(1)`` as "a new tf.function made for every call".
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

import tfdiag
from tfdiag.capture import tracer_hook
from tfdiag.capture.trace_limit import by_function
from tfdiag.capture.traces import TraceRecorder, recording
from tfdiag.records.errors import TfdiagError
from tfdiag.records.traces import TraceEvent


class _Graph:
    def get_operations(self) -> list[Any]:
        return [SimpleNamespace(name="add")]


class _Captures:
    """TensorFlow's ``FunctionCaptures``: one per ``tf.function`` object, freed with it."""


class _Literal:
    def __init__(self, value: int) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Literal[{self.value}]"


class _Function:
    """A ``tf.function`` object: its captures container stands for it, as TensorFlow's does."""

    def __init__(self, python_function: Callable[..., Any]) -> None:
        self.captures = _Captures()
        self.python_function = python_function


def step(x: Any) -> Any:
    return x


@pytest.fixture
def tracer(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A fake ``tracing_compilation`` whose ``_create_concrete_function`` the tests call."""
    module = types.ModuleType(tracer_hook.MODULE)

    def create(function_type: Any, type_context: Any, func_graph: Any, options: Any) -> str:
        return "concrete"

    module._create_concrete_function = create  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, tracer_hook.MODULE, module)
    return module


def trace(tracer: types.ModuleType, fn: _Function, value: int = 0) -> None:
    """TensorFlow tracing ``fn`` for an argument ``Literal[value]``."""
    param = SimpleNamespace(name="x", annotation=_Literal(value))
    options = SimpleNamespace(
        python_function=fn.python_function, name="step", function_captures=fn.captures
    )
    tracer._create_concrete_function(
        SimpleNamespace(parameters={"x": param}), None, _Graph(), options
    )


def _original(tracer: types.ModuleType) -> Any:
    return vars(tracer)["_create_concrete_function"]


# -- the hook -------------------------------------------------------------------------------


def test_the_hook_is_installed_once_and_removed_when_the_last_listener_leaves(
    tracer: types.ModuleType,
) -> None:
    original = _original(tracer)
    a, b = TraceRecorder(), TraceRecorder()
    with recording(a):
        hook = tracer._create_concrete_function
        assert hook is not original
        with pytest.raises(RuntimeError), recording(b):
            assert tracer._create_concrete_function is hook  # not wrapped twice
            trace(tracer, _Function(step))
            raise RuntimeError("the block raised")
        assert tracer._create_concrete_function is hook  # a still listens
        trace(tracer, _Function(step))
    assert tracer._create_concrete_function is original
    assert (len(a.events), len(b.events)) == (2, 1)


def test_a_recorder_hears_its_own_threads_traces_only(tracer: types.ModuleType) -> None:
    other = TraceRecorder()
    mine = TraceRecorder()
    started, traced = threading.Event(), threading.Event()

    def in_another_thread() -> None:
        with recording(other):
            started.set()
            traced.wait(10)
            trace(tracer, _Function(step), 1)

    thread = threading.Thread(target=in_another_thread)
    thread.start()
    started.wait(10)
    with recording(mine):
        trace(tracer, _Function(step), 2)
        traced.set()
        thread.join(10)
    assert [e.params for e in mine.events] == [(("x", "Literal[2]"),)]
    assert [e.params for e in other.events] == [(("x", "Literal[1]"),)]
    assert tracer._create_concrete_function is _original(tracer)


# -- max_traces in threads (32.5) -------------------------------------------------------------


def test_a_block_overlapping_another_threads_block_still_counts_its_traces(
    tracer: types.ModuleType,
) -> None:
    """Thread A's block starts, then B's; A's ends first; B traces 3×: B fails."""
    original = _original(tracer)
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def thread_a() -> None:
        try:
            with tfdiag.max_traces(1):
                a_in.set()
                b_in.wait(10)
                trace(tracer, _Function(step))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        a_out.set()

    a = threading.Thread(target=thread_a)
    a.start()
    a_in.wait(10)
    fn = _Function(step)
    with pytest.raises(tfdiag.TooManyTraces, match="`step` .* was traced 3×"):
        with tfdiag.max_traces(1):
            b_in.set()
            a_out.wait(10)
            for i in range(3):
                trace(tracer, fn, i)
    a.join(10)
    assert errors == []
    assert tracer._create_concrete_function is original  # no wrapper left behind


def test_a_block_does_not_count_another_threads_traces(tracer: types.ModuleType) -> None:
    fn = _Function(step)
    with tfdiag.max_traces(1):
        thread = threading.Thread(target=lambda: [trace(tracer, fn, i) for i in range(3)])
        thread.start()
        thread.join(10)
        trace(tracer, fn, 0)


def test_one_max_traces_object_used_in_two_threads_at_once_keeps_their_blocks_apart(
    tracer: types.ModuleType,
) -> None:
    guard = tfdiag.max_traces(1)
    inside, leave = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def retraces() -> None:
        try:
            with guard:
                inside.set()
                leave.wait(10)
                for i in range(2):
                    trace(tracer, _Function(step), i)
        except BaseException as exc:  # noqa: BLE001
            failed.append(exc)

    thread = threading.Thread(target=retraces)
    thread.start()
    inside.wait(10)
    with guard:  # traced once: passes, though the other thread's block (same object) fails
        trace(tracer, _Function(step))
    leave.set()
    thread.join(10)
    assert [type(e) for e in failed] == [tfdiag.TooManyTraces]


def test_blocks_of_one_thread_that_overlap_without_nesting_are_refused(
    tracer: types.ModuleType,
) -> None:
    first, second = tfdiag.max_traces(1), tfdiag.max_traces(1)
    first.__enter__()
    second.__enter__()
    trace(tracer, _Function(step))
    with pytest.raises(TfdiagError, match="overlap without nesting"):
        first.__exit__(None, None, None)
    with pytest.raises(TfdiagError, match="overlap without nesting"):
        second.__exit__(None, None, None)
    assert tracer._create_concrete_function is _original(tracer)


def test_nested_blocks_each_count_the_traces_inside_them(tracer: types.ModuleType) -> None:
    fn = _Function(step)
    with pytest.raises(tfdiag.TooManyTraces, match="traced 3×"):
        with tfdiag.max_traces(2):
            trace(tracer, fn, 0)
            with tfdiag.max_traces(2):
                trace(tracer, fn, 1)
                trace(tracer, fn, 2)  # the inner block: 2 traces, passes
    assert tracer._create_concrete_function is _original(tracer)


# -- functions told apart by object (32.7) ----------------------------------------------------


def test_two_long_lived_functions_of_one_source_each_traced_once_pass(
    tracer: types.ModuleType,
) -> None:
    """Two models' ``predict_on_batch``, two ``tf.Module`` s, a GAN's two halves."""
    generator, discriminator = _Function(step), _Function(step)
    with tfdiag.max_traces(1):  # each traced on its first call, reused after
        trace(tracer, generator)
        trace(tracer, discriminator)


def test_a_function_made_for_every_call_is_still_one_function_traced_again(
    tracer: types.ModuleType,
) -> None:
    kept = []
    with pytest.raises(tfdiag.TooManyTraces, match="a new `tf.function` is made for every call"):
        with tfdiag.max_traces(1):
            for _ in range(3):
                fn = _Function(step)  # the last one is still alive at the block's end
                trace(tracer, fn)
                kept.append(fn.python_function)
    with pytest.raises(tfdiag.TooManyTraces, match="traced 2×"):
        with tfdiag.max_traces(1):  # one long-lived object traced twice: its own count
            long_lived = _Function(step)
            trace(tracer, long_lived, 0)
            trace(tracer, long_lived, 1)
            other = _Function(step)
            trace(tracer, other, 0)


def _event(function_id: int, call: int = 0) -> TraceEvent:
    return TraceEvent(call, "step", "/u/model.py", 3, "step", (("x", "TensorSpec"),), function_id)


def test_by_function_splits_a_source_only_when_every_object_lives() -> None:
    events = [_event(1), _event(2), _event(1, 1)]
    assert [[e.function_id for e in g] for g in by_function(events, {1, 2})] == [[1, 1], [2]]
    assert [[e.function_id for e in g] for g in by_function(events, {1})] == [[1, 2, 1]]
    data = [
        TraceEvent(0, "StructuredFunctionWrapper.f", "/tf/d.py", 1, "Dataset_map_f", (), k)
        for k in (1, 2)
    ]
    assert len(by_function(data, {1, 2})) == 1  # tf.data's: by name, a pipeline built again
