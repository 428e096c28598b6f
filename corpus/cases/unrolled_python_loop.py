"""A simulation in a `tf.function` whose Python `for t in range(...)` loop unrolls into a
graph of thousands of ops, traced when the script runs it."""

from types import SimpleNamespace

from corpus.harness import Case

CASE = Case(
    id="unrolled-python-loop",
    title="the first call of my tf.function takes many seconds",
    source="tensorflow/tensorflow#33068 and #42474 (a Python loop in a tf.function is unrolled: "
    "huge graphs, minutes of tracing); AutoGraph guide: `tf.range` loops become tf.while_loop",
    mechanism=(
        "simulate() loops `for t in range(STEPS)` over Python ints: AutoGraph leaves a Python "
        "range alone, so every step's ops are copied into the graph (thousands of ops to trace "
        "and optimise); `for t in tf.range(STEPS)` becomes one tf.while_loop"
    ),
    expect="build-dominated",
    fix_mentions=("tf.range",),
    premise=8.0,
    iterations=5,
)

STEPS = 80


def _simulate(x):
    import tensorflow as tf

    v = tf.zeros_like(x)
    for _ in range(STEPS):
        v = 0.9 * v + 0.1 * tf.tanh(x - v)
        x = x + 0.01 * v
    return x


def _simulate_while(x):
    import tensorflow as tf

    v = tf.zeros_like(x)
    for _ in tf.range(STEPS):
        v = 0.9 * v + 0.1 * tf.tanh(x - v)
        x = x + 0.01 * v
    return x


def setup():
    import tensorflow as tf

    x = tf.random.stateless_normal((64,), seed=(1, 2))
    return SimpleNamespace(x=x, tf=tf)


def slow(s):
    # The user's script: make the function and run it (the trace is part of every run).
    return s.tf.function(_simulate)(s.x)


def fast(s):
    return s.tf.function(_simulate_while)(s.x)


def diagnose(s, iterations):
    import tfdiag

    return tfdiag.profile(s.tf.function(_simulate), s.x, iterations=iterations)
