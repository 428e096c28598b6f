"""A prediction service that reloads the latest checkpoint's weights (`load_weights`)
before every request, so it always serves the newest model."""

import os
import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="load-weights-per-request",
    title="my Flask endpoint calls load_weights before predict and every request is slow",
    source="JoelKronander/TensorFlask#2 (does the server load the weights again for "
    "each request?); matterport/Mask_RCNN#2716 (create the model and load weights at "
    "Flask start-up); PyDataBlog/fastapi-model-deployment#1 (load once, keep it global)",
    mechanism=(
        "handle(request) calls model.load_weights(path) on a .weights.h5 file of a "
        "3x1024 MLP (~10 MB) and then predicts a batch of 8 rows: reading and assigning "
        "every weight dominates the request; loading once (or only when the file's "
        "mtime changes) is the fix"
    ),
    expect="model-rebuilt-per-call",
    fix_mentions=("once",),
    premise=9,
    iterations=6,
)


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(85)
    model = keras.Sequential(
        [keras.Input((256,))]
        + [keras.layers.Dense(1024, activation="relu") for _ in range(3)]
        + [keras.layers.Dense(10)]
    )
    folder = tempfile.mkdtemp(prefix="tfdiag-corpus-weights-")
    path = os.path.join(folder, "latest.weights.h5")
    model.save_weights(path)
    predict = tf.function(lambda x: model(x, training=False))
    rng = np.random.default_rng(85)
    requests = [rng.standard_normal((8, 256)).astype("float32") for _ in range(4)]
    s = SimpleNamespace(model=model, path=path, predict=predict, requests=requests, tf=tf)
    slow(s)
    fast(s)
    return s


def serve(s, reload):
    out = []
    for x in s.requests:
        if reload:
            s.model.load_weights(s.path)
        out.append(np.asarray(s.predict(s.tf.constant(x))))
    return out


def slow(s):
    return serve(s, reload=True)


def fast(s):
    # The fix: the weights loaded once at start-up.
    return serve(s, reload=False)
