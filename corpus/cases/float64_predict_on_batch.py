"""Keras 3: a logistic-regression scorer fed float64 chunks of a wide feature matrix
through `predict_on_batch` in a loop."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="float64-predict-on-batch",
    title="predict_on_batch on my feature matrix is slower than I expect for a tiny model",
    source="d2l-ai/d2l-en PR#1059 and rstudio/keras3 PR#1023 (float64 autocast warning); "
    "tensorflow/tensorflow#36176; microsoft/CNTK#2077 ('convert your data beforehand')",
    mechanism=(
        "the TF-IDF-style features are float64 (NumPy's default); every predict_on_batch "
        "call converts a 256x2048 float64 chunk (4 MB) to a tensor and casts it to float32 "
        "for a 2048->1 logistic regression that costs a fraction of that"
    ),
    expect="conversion-overhead",
    fix_mentions=("float32", "astype", "convert_to_tensor"),
    premise=1.8,
    iterations=10,
)

CHUNKS, ROWS, FEATURES = 16, 256, 2048


def setup():
    import keras

    keras.utils.set_random_seed(36)
    model = keras.Sequential(
        [keras.Input((FEATURES,)), keras.layers.Dense(1, activation="sigmoid")]
    )
    rng = np.random.default_rng(36)
    X = rng.random((CHUNKS * ROWS, FEATURES))  # float64, as NumPy makes it
    X32 = X.astype("float32")  # the fix: once, before the loop
    model.predict_on_batch(X[:ROWS])
    model.predict_on_batch(X32[:ROWS])
    return SimpleNamespace(model=model, X=X, X32=X32)


def score(model, X):
    return [model.predict_on_batch(X[i * ROWS : (i + 1) * ROWS]) for i in range(CHUNKS)]


def slow(s):
    return score(s.model, s.X)


def fast(s):
    return score(s.model, s.X32)


def target(s):
    return score, (s.model, s.X), {}
