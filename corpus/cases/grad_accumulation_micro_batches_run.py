"""Gradient accumulation over 32 micro-batches of 4, each through an eager `GradientTape`,
diagnosed with `tfdiag run` on the whole script (corpus/cases/_grad_accum_program.py)."""

from corpus.cases import _grad_accum_program as program
from corpus.harness import Case, under_run

CASE = Case(
    id="grad-accumulation-micro-batches-run",
    title="gradient accumulation made each optimizer step far slower than one big batch",
    source="keras-team/keras#3556 and tensorflow/tensorflow#38813 (gradient accumulation in a "
    "custom loop); keras-io 'gradient accumulation' recipes with a Python micro-batch loop",
    mechanism=(
        "every optimizer step runs 32 eager forward passes, tapes and tape.gradient calls of "
        "a 4-layer MLP on 4 samples each, then sums 8 gradient lists in Python: hundreds of "
        "ops dispatched one by one for 128 samples; one tf.function step over the 128 "
        "samples gives the same update in one call"
    ),
    expect="eager-execution",
    # The training step compiled, not the model call alone: a bare "tf.function" also
    # matches the inference wrapper `tf.function(lambda x: model(x, training=False))`, which
    # is no fix for a forward pass under a tape.
    fix_mentions=("@tf.function", "training step", "train step"),
    premise=40,  # 54-68x measured (--rounds 3, 2026-12-04, two runs)
    iterations=3,
    also=("drift", "spikes"),
)


def setup():
    return program.setup()


def slow(s):
    return program.slow(s)


def fast(s):
    return program.fast(s)


diagnose = under_run(program.__file__)
