"""Eager work beside graph calls found by the framework calls the user's code makes
(``tfdiag/advise/eager_calls.py``), on synthetic records, TF-free: a Keras model called
eagerly once per environment step beside a loop's many graph calls (keras-io's DDPG), and
the near-misses — a model loaded (its layers called while it is built), a graph call, a
builtin iterating a dataset — that must not be taken for it."""

from __future__ import annotations

from typing import Any

import pytest
from synth import SITE, Node, make_report, tf_record

from tfdiag.results.report import Report

N = 5
TF = SITE + "tensorflow/python/"
KERAS = SITE + "keras/src/"
FAST_PATH = "<built-in method tensorflow.python._pywrap_tfe.TFE_Py_FastPathExecute>"
CALL_FLAT = TF + "eager/polymorphic_function/concrete_function.py"
FUNCTION = TF + "eager/polymorphic_function/polymorphic_function.py"
KERAS_WRAPPER = KERAS + "utils/traceback_utils.py"
USER = "/home/me/agent.py"
STEPS = 20  # environment steps per iteration (an episode)


def _ids(report: Report) -> list[str]:
    return [f.id for f in report.findings]


def _graph_calls(seconds: float, calls: int) -> Node:
    """``calls`` calls of a ``tf.function`` running its graph for ``seconds`` in all."""
    flat = Node(CALL_FLAT, "ConcreteFunction._call_flat", seconds, calls)
    return Node(FUNCTION, "Function.__call__", 0.05 * seconds, calls, [flat])


def _layer_call(python_s: float, ops: int, calls: int) -> Node:
    """``model(x)`` run eagerly ``calls`` times: the layers' Python and ``ops`` tiny ops."""
    fast = Node("~", FAST_PATH, 20e-6 * ops, ops)
    wrapper = Node(TF + "ops/gen_math_ops.py", "mat_mul", 0.1 * python_s, ops, [fast])
    layer = Node(KERAS + "layers/layer.py", "Layer.__call__", 0.9 * python_s, calls, [wrapper])
    return Node(KERAS_WRAPPER, "filter_traceback.<locals>.error_handler", 0.0, calls, [layer])


def _episode(actor_s: float, graph_s: float, tf_profile: Any = None) -> Report:
    """An RL episode per iteration: ``policy`` calls the actor eagerly on every step (its
    Python ``actor_s`` per episode), ``learn`` makes 3 graph calls per step (``graph_s``)."""
    policy = Node(
        USER, "policy", 0.001 * N, STEPS * N, [_layer_call(actor_s * N, 40 * STEPS * N, STEPS * N)]
    )
    learn = Node(USER, "learn", 0.001 * N, STEPS * N, [_graph_calls(graph_s * N, 3 * STEPS * N)])
    policy.line, learn.line = 12, 30
    root = Node(USER, "episode", 0.001 * N, N, [policy, learn])
    return make_report(
        [root], N, cold=[], method="episode", target="agent.episode", tf_profile=tf_profile
    )


def test_an_eager_model_call_beside_many_graph_calls_leads_as_eager_execution() -> None:
    """60 graph calls per iteration and an eager actor call per step: the actor's Python is
    40 % of the time, and leads over the high compute-bound the graph's ops make (which must
    not say Python-side changes won't help)."""
    ops = tf_record(wall_s=0.6, op_s=0.5)
    report = _episode(actor_s=0.4, graph_s=0.55, tf_profile=ops)
    assert _ids(report)[:2] == ["eager-execution", "compute-bound"], _ids(report)
    lead = report.findings[0]
    assert lead.severity == "high" and lead.impact >= 0.3
    assert lead.evidence[0].startswith(
        "800 eager op dispatches per iteration (`TFE_Py_FastPathExecute`) beside 60 graph "
        "function calls"
    )
    assert lead.evidence[2] == (
        "most of them come from `layer.py:Layer.__call__`, called from your `policy` (agent.py:12)"
    )
    assert "tf.function" in lead.fix
    assert not any("won't help" in f.fix for f in report.findings)


def test_a_small_eager_model_call_beside_the_graph_is_not_reported() -> None:
    report = _episode(actor_s=0.03, graph_s=0.9)
    assert "eager-execution" not in _ids(report)


def test_layers_called_while_a_model_is_loaded_are_not_an_eager_model_call() -> None:
    """``load_model`` builds the model by calling its layers (the same wrapper row as the
    user's own calls): that is the load's cost, model-rebuilt-per-call's, not eager work a
    graph would remove."""
    layer = _layer_call(0.4 * N, 40 * N, 8 * N).children[0]
    load = Node(KERAS + "saving/saving_api.py", "load_model", 0.05 * N, N, [layer])
    wrapped = Node(KERAS_WRAPPER, "filter_traceback.<locals>.error_handler", 0.0, N, [load])
    root = Node("/home/me/serve.py", "answer", 0.001 * N, N, [wrapped, _graph_calls(0.5 * N, N)])
    report = make_report([root], N, cold=[], method="answer", target="serve.answer")
    assert _ids(report)[0] == "model-rebuilt-per-call"
    assert "eager-execution" not in _ids(report)


@pytest.mark.parametrize("name", ["Model.load_weights", "Adam.__init__"])
def test_weights_loaded_or_objects_made_per_call_are_not_eager_execution(name: str) -> None:
    """Their ops (variables assigned, slots initialised) cannot move into a graph."""
    fast = Node("~", FAST_PATH, 20e-6 * 30 * N, 30 * N)
    assign = Node(TF + "ops/resource_variable_ops.py", "assign", 0.05 * N, 30 * N, [fast])
    made = Node(KERAS + "models/model.py", name, 0.4 * N, N, [assign])
    root = Node("/home/me/serve.py", "answer", 0.001 * N, N, [made, _graph_calls(0.5 * N, N)])
    report = make_report([root], N, cold=[], method="answer", target="serve.answer")
    assert "eager-execution" not in _ids(report)


def test_a_builtin_iterating_a_dataset_is_not_an_eager_call() -> None:
    """``sum(1 for _ in ds)``: the builtin calls back into the user's generator, and it
    into the iterator, whose ops are the input pipeline's."""
    fast = Node("~", FAST_PATH, 20e-6 * 10 * N, 10 * N)
    nxt = Node(TF + "data/ops/iterator_ops.py", "OwnedIterator.__next__", 0.3 * N, 10 * N, [fast])
    gen = Node(USER, "epoch.<locals>.<genexpr>", 0.001 * N, 10 * N, [nxt])
    total = Node("~", "<built-in method builtins.sum>", 0.001 * N, N, [gen])
    root = Node(USER, "epoch", 0.001 * N, N, [total, _graph_calls(0.5 * N, 4 * N)])
    report = make_report([root], N, cold=[], method="epoch", target="agent.epoch")
    assert "eager-execution" not in _ids(report)


@pytest.mark.parametrize(
    "path",
    [KERAS + "models/model.py", SITE + "tf_keras/src/engine/training.py"],
    ids=["keras3", "tf_keras"],
)
def test_load_weights_on_every_request_is_a_model_rebuilt_per_call(path: str) -> None:
    """A server reloading its checkpoint before each request: the weights read and assigned
    are the cost, found as a per-call model build with the load-once fix."""
    fast = Node("~", FAST_PATH, 20e-6 * 30 * N, 30 * N)
    assign = Node(TF + "ops/resource_variable_ops.py", "assign", 0.05 * N, 30 * N, [fast])
    load = Node(path, "Model.load_weights", 0.8 * N, N, [assign])
    root = Node("/home/me/serve.py", "handle", 0.001 * N, N, [load, _graph_calls(0.1 * N, N)])
    report = make_report([root], N, cold=[], method="handle", target="serve.handle")
    assert _ids(report) == ["model-rebuilt-per-call"]
    lead = report.findings[0]
    assert lead.impact == pytest.approx(0.85 / 0.956, abs=0.01)
    assert lead.fix.startswith("`load_weights` runs on every call")
    assert "os.path.getmtime(path)" in lead.fix
