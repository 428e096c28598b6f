"""A cyclical learning rate set by re-compiling before each one-epoch `fit`, diagnosed with
`tfdiag run` on the program as a script: `compile()` runs between the `fit` calls, outside
the call site (one program, two call styles: corpus/cases/_cyclic_lr_program.py)."""

from corpus.cases import _cyclic_lr_program as program
from corpus.harness import Case, under_run

CASE = Case(
    id="compile-per-epoch-cyclic-lr-run",
    title="my cyclical learning rate makes every epoch start with a long stall",
    source="keras-team/keras#898 (decreasing learning rates between epochs by recompiling); "
    "keras-team/keras#5724 (cyclical learning rates: a callback, not compile); Smith 2017, "
    "Cyclical Learning Rates for Training Neural Networks",
    mechanism=(
        "each epoch calls compile(SGD(lr, momentum=0.9)) then fit(epochs=1): run sees the fit "
        "site's model with no train_function at each later call, so each fit traces its step "
        "again; compiled once, `model.optimizer.learning_rate.assign(lr)` keeps it"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("learning_rate.assign", "LearningRateScheduler"),
    premise=15,
    iterations=5,
)


def setup():
    return program.setup()


def slow(s):
    return program.slow(s)


def fast(s):
    return program.fast(s)


diagnose = under_run(program.__file__)
