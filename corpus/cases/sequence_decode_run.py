"""tf_keras `fit` on a `Sequence` that decodes one PNG per sample, `workers=1`, diagnosed with
`tfdiag run` on the program as a script (one `fit` call) (one program, three call styles:
corpus/cases/_sequence_program.py)."""

from corpus.cases import _sequence_program as program
from corpus.harness import Case, under_run

CASE = Case(
    id="sequence-decode-run",
    title="my GPU sits idle while fit reads images from a keras.utils.Sequence",
    source="keras-team/keras#9531; keras-team/keras#11727; keras-team/keras#7168",
    mechanism=(
        "Sequence.__getitem__ reads (2 ms, a blocking read) and decodes 8 PNGs per batch "
        "with PIL; with workers=1 tf_keras runs it through tf.data's from_generator on a "
        "tf.data thread, and the step waits for it (cProfile counts the wait as op time)"
    ),
    expect="input-bound",
    fix_mentions=("cache", "from_tensor_slices"),
    premise=2,
    iterations=6,
)


def setup():
    return program.setup()


def slow(s):
    return program.slow(s)


def fast(s):
    return program.fast(s)


diagnose = under_run(program.__file__)
