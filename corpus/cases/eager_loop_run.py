"""A custom `GradientTape` training loop with no `tf.function`, diagnosed with `tfdiag run` on
the program as a script (the eager model call is the site) (one program, two call styles:
corpus/cases/_eager_loop_program.py)."""

from corpus.cases import _eager_loop_program as program
from corpus.harness import Case, under_run

CASE = Case(
    id="eager-loop-run",
    title="my custom training loop is much slower than model.fit",
    source="tensorflow/tensorflow#31938; TensorFlow's custom-training walkthrough "
    "(tensorflow/docs site/en/tutorials/customization/custom_training_walkthrough.ipynb)",
    mechanism=(
        "the forward pass, loss, tape.gradient and Adam's update run eagerly for each of 8 "
        "batches: one Python dispatch per op of a 4-layer MLP"
    ),
    expect="eager-execution",
    fix_mentions=("tf.function",),
    premise=10,
    iterations=4,
)


def setup():
    return program.setup()


def slow(s):
    return program.slow(s)


def fast(s):
    return program.fast(s)


diagnose = under_run(program.__file__)
