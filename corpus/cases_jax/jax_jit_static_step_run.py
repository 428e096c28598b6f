"""Keras 3 on JAX: the user's own jitted train step with a static step counter, diagnosed
with `tfdiag run` on the whole script: the step is no Keras call site, so the script's
recorded compilations make the finding (corpus/cases_jax/_jit_step_program.py)."""

from corpus.cases_jax import _jit_step_program as program
from corpus.harness import Case, under_script

CASE = Case(
    id="jax-jit-static-step-run",
    title="tfdiag run says nothing about my JAX training loop, which crawls",
    source="keras.io 'Writing a training loop from scratch in JAX' (a jitted train_step "
    "around stateless_call); jax-ml/jax#4572 (a static argument is part of the cache key)",
    mechanism=(
        "train_step(trainable, non_trainable, x, y, step) is jax.jit(static_argnums=4): each "
        "new step is a new cache key, so every step traces stateless_call and jax.grad and "
        "XLA compiles the update again; not static, step is an array input of one program"
    ),
    expect="per-iteration-tracing",
    fix_mentions=("static_argnums",),
    premise=20,
    iterations=2,
    backend="jax",
)


def setup():
    return program.setup()


def slow(s):
    return program.slow(s)


def fast(s):
    return program.fast(s)


diagnose = under_script(program.__file__)
