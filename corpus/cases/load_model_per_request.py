"""A prediction endpoint calls `keras.models.load_model` inside the request handler."""

import os
import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="load-model-per-request",
    title="every prediction request takes half a second; predict alone takes a tenth of that",
    source="tensorflow/tensorflow#43501 (load_model inside the prediction function); "
    "keras-team/keras#13710 (new model object per call)",
    mechanism=(
        "predict_request() loads the .keras file (deserialise config, build layers, read "
        "weights) and then calls predict on the fresh model, whose predict function has to be "
        "traced again, on every request"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("once",),
    premise=2.4,
    iterations=3,
    also=("per-call-input-pipeline", "per-iteration-tracing"),
)


def setup():
    import keras

    keras.utils.set_random_seed(16)
    model = keras.Sequential(
        [keras.Input((30,))]
        + [keras.layers.Dense(256, activation="relu") for _ in range(8)]
        + [keras.layers.Dense(1, activation="sigmoid")]
    )
    model.compile("adam", "binary_crossentropy")
    tmp = tempfile.mkdtemp(prefix="tfdiag-corpus-")
    path = os.path.join(tmp, "model.keras")
    model.save(path)
    rng = np.random.default_rng(16)
    x = rng.standard_normal((4, 30)).astype("float32")
    loaded = keras.models.load_model(path)
    loaded.predict(x, verbose=0)
    return SimpleNamespace(path=path, x=x, loaded=loaded)


def predict_request(path, x):
    """The user's handler: load, predict, return."""
    import keras

    model = keras.models.load_model(path)
    return model.predict(x, verbose=0)


def slow(s):
    return predict_request(s.path, s.x)


def fast(s):
    # The fix: the model is loaded once at start-up (setup); the handler only predicts.
    return s.loaded.predict(s.x, verbose=0)


def target(s):
    return predict_request, (s.path, s.x), {}
