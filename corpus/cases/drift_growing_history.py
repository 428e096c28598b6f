"""A scoring service appends every batch's embeddings to a list and re-concatenates the
whole history on every call to update its alert threshold: each call is slower."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="drift-growing-history",
    title="my inference loop gets slower the longer it runs",
    source="keras-team/keras#12916 and #6620 (each call takes longer than the last); "
    "philipperemy/keract#74 (activations loop slows down every iteration); "
    "keras-team/keras#13118",
    mechanism=(
        "score(batch) appends the batch's 8192x64 embeddings (2 MB) to a Python list, then "
        "np.concatenate(history) and its mean/std on every call: the work per call grows "
        "linearly with the number of calls so far, while the model call stays constant; "
        "running sums give the same threshold in constant time"
    ),
    expect="drift",
    fix_mentions=("concatenate", "grow"),
    premise=4.4,
    iterations=40,
)

ROWS, FEATURES, EMBED = 8192, 16, 64
PRELOADED = 4  # batches already scored when the user starts watching


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(41)
    model = keras.Sequential([keras.Input((FEATURES,)), keras.layers.Dense(EMBED)])
    embed = tf.function(lambda x: model(x, training=False))
    rng = np.random.default_rng(41)
    x = tf.constant(rng.standard_normal((ROWS, FEATURES)).astype("float32"))
    first = embed(x).numpy()
    s = SimpleNamespace(embed=embed, x=x)
    s.history = [first.copy() for _ in range(PRELOADED)]  # the slow service's state
    s.count, s.total, s.total_sq = (  # the fixed service's running sums, same history
        PRELOADED * first.size,
        PRELOADED * first.sum(dtype="float64"),
        PRELOADED * np.square(first, dtype="float64").sum(),
    )
    return s


def score(s, x):
    """The user's service call."""
    emb = s.embed(x).numpy()
    s.history.append(emb)
    everything = np.concatenate(s.history)
    return emb, float(everything.mean() + 3 * everything.std())


def score_fixed(s, x):
    emb = s.embed(x).numpy()
    s.count += emb.size
    s.total += emb.sum(dtype="float64")
    s.total_sq += np.square(emb, dtype="float64").sum()
    mean = s.total / s.count
    return emb, float(mean + 3 * np.sqrt(s.total_sq / s.count - mean * mean))


def slow(s):
    return score(s, s.x)


def fast(s):
    return score_fixed(s, s.x)


def target(s):
    return score, (s, s.x), {}
