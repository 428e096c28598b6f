"""Keras 3: a script's one `fit(batch_size=1)` of a tiny model, diagnosed with `tfdiag run`
(the fit probe records it batch by batch, so the epoch's step count comes from Keras' params;
one program: corpus/cases/_fit_batch_one_program.py)."""

from corpus.cases import _fit_batch_one_program as program
from corpus.harness import Case, under_run

CASE = Case(
    id="fit-batch-size-1-run",
    title="my training script is slow although the model is tiny (batch_size=1)",
    source="keras-team/keras#102; keon/deep-q-learning#28 (the `tfdiag run` twin of "
    "fit-batch-size-1)",
    mechanism=(
        "768 steps of one sample each in one fit: per step the trainer calls the train "
        "function, runs callbacks and converts logs; the step itself is microseconds"
    ),
    expect="per-step-overhead",
    fix_mentions=("steps_per_execution", "batch_size"),
    premise=2.0,  # 2.21× measured at load 3 (corpus.run_one --rounds 3, 2026-12-06)
    iterations=4,
)


# the program's own functions: the script `tfdiag run` runs is the same program
setup, slow, fast = program.setup, program.slow, program.fast
diagnose = under_run(program.__file__)
