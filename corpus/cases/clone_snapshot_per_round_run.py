"""A frozen copy of the model made with `clone_model` + `set_weights` every round to score
the validation set, diagnosed with `tfdiag run` on the program as a script: `clone_model`
runs between the calls, outside the `predict_on_batch` site (one program, two call styles:
corpus/cases/_clone_snapshot_program.py)."""

from corpus.cases import _clone_snapshot_program as program
from corpus.harness import Case, under_run

CASE = Case(
    id="clone-snapshot-per-round-run",
    title="scoring a frozen copy of my model after each round takes longer than the training",
    source="ageron/handson-ml2 PR#302 and keras-team/keras#13710 (clone_model per call; "
    "a target/snapshot model built once and updated with set_weights); Keras docs: "
    "clone_model (a new model, with newly built layers and no compiled functions)",
    mechanism=(
        "each round clones the model and scores 512 validation rows with "
        "snapshot.predict_on_batch: the clone is a new model, so its predict step is traced "
        "again every round; one snapshot built once, its weights copied in with "
        "set_weights, is the fix"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("set_weights",),
    premise=4,
    iterations=5,
)


def setup():
    return program.setup()


def slow(s):
    return program.slow(s)


def fast(s):
    return program.fast(s)


diagnose = under_run(program.__file__)
