"""A Keras 3 model compiled with `jit_compile=True` serving requests of a different size on
every call (`predict_on_batch`), diagnosed with `tfdiag run` on the
program as a script (corpus/cases/_xla_program.py)."""

from corpus.cases import _xla_program as program
from corpus.harness import Case, under_run

CASE = Case(
    id="xla-compile-new-shape-run",
    title="jit_compile=True made my model fast in the benchmark but my service is slow",
    source="tensorflow/tensorflow#43745 (XLA recompiles for every input shape); "
    "keras-team/keras#19532 (jit_compile with variable batch sizes)",
    mechanism=(
        "Keras traces predict's step once to a (None, 16) signature, but XLA compiles one "
        "executable per concrete batch size inside the graph call: every request of a new "
        "size pays a compilation (~0.1-0.5 s) for ~1 ms of work"
    ),
    expect="xla-compile-per-shape",
    fix_mentions=("pad", "drop_remainder", "jit_compile=False"),
    premise=20,
    iterations=6,
)


def setup():
    return program.setup()


def slow(s):
    return program.slow(s)


def fast(s):
    return program.fast(s)


diagnose = under_run(program.__file__)
