"""A synthetic profile shaped like the seeds' TF 2.0 `predict` profile (seed 003).

The seed measured, on TF 2.0 with a compiled tiny model, that `_process_inputs` took 81 % of
`predict`'s runtime and `_create_graph_function` 72 %. This tree reproduces those shares with
the TF 2.0 module paths (`tensorflow_core/...`, a Windows install as in the seed), 20
iterations after one cold call.
"""

from __future__ import annotations

from synth import Node, build_stats

from tfdiag.records.stats import ProfileStats

SITE = "C:\\Anaconda3\\Lib\\site-packages\\tensorflow_core\\python\\"
ITERATIONS = 20
CALLS = ITERATIONS + 1


def _per_call() -> Node:
    create_graph = Node(
        SITE + "eager\\function.py",
        "_create_graph_function",
        0.012 * CALLS,
        CALLS,
        line=2300,
        children=[
            Node(
                SITE + "framework\\func_graph.py",
                "func_graph_from_py_func",
                0.060 * CALLS,
                CALLS,
                line=800,
            )
        ],
    )
    adapter = Node(
        SITE + "keras\\engine\\data_adapter.py",
        "__init__",
        0.005 * CALLS,
        CALLS,
        line=220,
        children=[create_graph],
    )
    process = Node(
        SITE + "keras\\engine\\training_v2.py",
        "_process_inputs",
        0.004 * CALLS,
        CALLS,
        line=600,
        children=[adapter],
    )
    convert = Node(SITE + "framework\\ops.py", "convert_to_tensor", 0.010 * CALLS, CALLS, line=1200)
    execute = Node(
        SITE + "eager\\function.py",
        "_call_flat",
        0.001 * CALLS,
        CALLS,
        line=1100,
        children=[Node(SITE + "eager\\execute.py", "quick_execute", 0.004 * CALLS, CALLS, line=30)],
    )
    loop = Node(
        SITE + "keras\\engine\\training_v2.py",
        "predict",
        0.002 * CALLS,
        CALLS,
        line=440,
        children=[process, convert, execute],
    )
    return Node(
        SITE + "keras\\engine\\training.py",
        "predict",
        0.002 * CALLS,
        CALLS,
        line=900,
        children=[loop],
    )


def tf20_predict_stats() -> ProfileStats:
    build = Node(SITE + "keras\\engine\\training.py", "_make_predict_function", 0.001, 1, line=2000)
    return build_stats(
        [Node("C:\\Users\\me\\seed003.py", "<module>", 0.0005, 1, children=[build, _per_call()])]
    )
