"""Non-overlapping attribution on synthetic call trees (no TensorFlow)."""

from __future__ import annotations

import pytest
from synth import SITE, Node, build_stats

from tfdiag.analysis.attribute import attribute, match_rules
from tfdiag.analysis.classify import classify
from tfdiag.records.catalog import Catalog, Category, Rule, default_catalog

TF = SITE + "tensorflow/python/"
KERAS = SITE + "keras/src/"
USER = "/home/me/train.py"


def _attr(roots: list[Node], catalog: Catalog | None = None, iterations: int = 20):
    stats = build_stats(roots)
    rules = match_rules(stats, catalog or default_catalog())
    return stats, attribute(stats, rules, classify(stats, iterations))


def _predict_tree() -> list[Node]:
    """A Keras-3-shaped predict: adapter → tf.data → tracing, plus a graph call."""
    tracing = Node(
        TF + "eager/polymorphic_function/tracing_compilation.py",
        "_create_concrete_function",
        0.20,
        calls=63,
        children=[Node(TF + "framework/func_graph.py", "func_graph_from_py_func", 0.30, 63)],
    )
    structured = Node(
        TF + "data/ops/structured_function.py",
        "StructuredFunctionWrapper.__init__",
        0.05,
        63,
        children=[tracing],
    )
    make_iter = Node(
        TF + "ops/gen_dataset_ops.py",
        "make_iterator",
        0.01,
        42,
        children=[Node("~", "<built-in method x._pywrap_tfe.TFE_Py_FastPathExecute>", 0.40, 42)],
    )
    adapter = Node(
        KERAS + "trainers/data_adapters/array_data_adapter.py",
        "ArrayDataAdapter.get_tf_dataset",
        0.02,
        21,
        children=[structured, make_iter],
    )
    call_flat = Node(
        TF + "eager/polymorphic_function/concrete_function.py",
        "ConcreteFunction._call_flat",
        0.01,
        21,
        children=[Node("~", "<built-in method x._pywrap_tfe.TFE_Py_Execute>", 0.05, 21)],
    )
    plumbing = Node(KERAS + "backend/tensorflow/trainer.py", "TensorFlowTrainer._helper", 0.03, 21)
    wrapper = Node(
        KERAS + "utils/traceback_utils.py",
        "error_handler",
        0.004,
        21,
        children=[
            Node(
                KERAS + "backend/tensorflow/trainer.py",
                "TensorFlowTrainer.predict",
                0.006,
                21,
                children=[adapter, call_flat, plumbing],
            ),
        ],
    )
    return [Node(USER, "main", 0.02, 1, children=[wrapper])]


def test_category_totals_sum_to_the_profiled_total() -> None:
    stats, a = _attr(_predict_tree())
    assert sum(a.by_category.values()) == pytest.approx(stats.total_s)
    assert sum(a.share(c) for c in Category) == pytest.approx(1.0)


def test_self_time_goes_to_the_nearest_culprit() -> None:
    _, a = _attr(_predict_tree())
    # func_graph_from_py_func (0.30) + _create_concrete_function (0.20): graph building,
    # even though both run under the input pipeline: the nearest culprit wins.
    assert a.seconds(Category.GRAPH_BUILDING) == pytest.approx(0.50)
    # adapter 0.02 + structured 0.05 + make_iterator 0.01 + the MakeIterator op (0.40)
    assert a.seconds(Category.INPUT_PIPELINE) == pytest.approx(0.48)
    # graph call 0.01 + its TFE_Py_Execute 0.05
    assert a.seconds(Category.OP_EXECUTION) == pytest.approx(0.06)


def test_weak_op_dispatch_follows_its_culprit_caller() -> None:
    """An eager op run for tf.data (MakeIterator) is input-pipeline time, not op execution."""
    _, a = _attr(_predict_tree())
    assert a.seconds(Category.OP_EXECUTION) < 0.1
    eager = Node(
        SITE + "tensorflow/python/ops/gen_math_ops.py",
        "mat_mul",
        0.01,
        21,
        children=[Node("~", "<built-in method x._pywrap_tfe.TFE_Py_FastPathExecute>", 0.4, 21)],
    )
    _, b = _attr([Node(USER, "main", 0.0, children=[eager])])
    assert b.seconds(Category.OP_EXECUTION) == pytest.approx(0.4)


def test_wrappers_are_looked_through_and_user_code_is_kept_apart() -> None:
    _, a = _attr(_predict_tree())
    # error_handler (0.004) and predict (0.006) and the uncatalogued helper (0.03) sit
    # under no culprit: framework "other"; the user's own frame keeps its self time.
    assert a.seconds(Category.OTHER) == pytest.approx(0.04)
    assert a.seconds(Category.USER_CODE) == pytest.approx(0.02)
    assert a.seconds(Category.WRAPPER) == 0.0


def test_a_function_reached_from_two_culprits_is_split_by_time() -> None:
    helper_a = Node(SITE + "pkg/util.py", "helper", 0.3, 10)
    helper_b = Node(SITE + "pkg/util.py", "helper", 0.1, 10)
    roots = [
        Node(
            USER,
            "main",
            0.0,
            children=[
                Node(
                    TF + "framework/func_graph.py",
                    "func_graph_from_py_func",
                    0.0,
                    10,
                    children=[helper_a],
                ),
                Node(
                    KERAS + "trainers/epoch_iterator.py",
                    "EpochIterator.__init__",
                    0.0,
                    10,
                    children=[helper_b],
                ),
            ],
        )
    ]
    _, a = _attr(roots)
    assert a.seconds(Category.GRAPH_BUILDING) == pytest.approx(0.3)
    assert a.seconds(Category.INPUT_PIPELINE) == pytest.approx(0.1)


def test_recursion_does_not_hang_or_lose_time() -> None:
    stats = build_stats(
        [Node(USER, "main", 0.1, children=[Node(SITE + "pkg/r.py", "recurse", 0.2, 5)])]
    )
    # Make `recurse` its own caller, as cProfile records recursion.
    from dataclasses import replace

    from tfdiag.records.function_stat import CallerEdge
    from tfdiag.records.stats import ProfileStats

    fns = list(stats.functions)
    i = next(n for n, f in enumerate(fns) if f.name == "recurse")
    fns[i] = replace(fns[i], callers=fns[i].callers + (CallerEdge(i, 3, 0, 0.1, 0.1),))
    stats = ProfileStats(tuple(fns))
    rules = match_rules(stats, default_catalog())
    a = attribute(stats, rules, classify(stats, 5))
    assert sum(a.by_category.values()) == pytest.approx(0.3)


def test_user_rules_come_first() -> None:
    mine = Rule("pkg/*", "*", Category.CALLBACKS, "my logger")
    roots = [Node(USER, "main", 0.0, children=[Node(SITE + "pkg/log.py", "write", 0.5, 20)])]
    _, before = _attr(roots)
    _, after = _attr(roots, default_catalog().with_rules([mine]))
    assert before.seconds(Category.CALLBACKS) == 0.0
    assert after.seconds(Category.CALLBACKS) == pytest.approx(0.5)
