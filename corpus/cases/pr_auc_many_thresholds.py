"""Keras 3 `fit` with a PR-AUC metric given 8,000 uneven thresholds (diagnosed with
`ProfileCallback` inside `fit`)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="pr-auc-many-thresholds",
    title="adding an AUC metric made every training step several times slower",
    source="tensorflow/tensorflow#34296 and keras-team/keras#19335 (AUC with many thresholds "
    "dominates the step); Keras AUC docs (evenly spaced thresholds use a faster path)",
    mechanism=(
        "compile(metrics=[AUC(curve='PR', thresholds=<8,000 sorted random values>)]): uneven "
        "thresholds take AUC's general path, which compares every prediction of the batch "
        "with every threshold (256 x 8,000) and updates four 8,000-entry confusion "
        "variables on each step, inside the compiled step, beside a 3-layer MLP's few ops; "
        "AUC(curve='PR', num_thresholds=200) measures the same curve"
    ),
    expect="compute-bound",
    fix_mentions=("num_thresholds", "fewer thresholds"),
    premise=3.5,  # 3.5-4.1x measured (--rounds 3, 2026-12-04, two runs)
    iterations=6,
    also=("drift",),
)

N, BATCH, THRESHOLDS = 8192, 256, 8000


def _model(keras, metric):
    m = keras.Sequential(
        [
            keras.Input((32,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    m.compile("adam", "binary_crossentropy", metrics=[metric])
    return m


def setup():
    import keras

    keras.utils.set_random_seed(9)
    rng = np.random.default_rng(9)
    thresholds = np.sort(rng.random(THRESHOLDS)).tolist()
    model = _model(keras, keras.metrics.AUC(curve="PR", thresholds=thresholds))
    fixed = _model(keras, keras.metrics.AUC(curve="PR", num_thresholds=200))
    fixed.set_weights(model.get_weights())
    x = rng.standard_normal((N, 32)).astype("float32")
    y = (x[:, :1] > 0).astype("float32")
    s = SimpleNamespace(model=model, fixed=fixed, x=x, y=y)
    slow(s)
    fast(s)
    return s


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0)


def fast(s):
    # The fix: 200 evenly spaced thresholds (AUC's fast path) for the same PR curve.
    return s.fixed.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0)


def diagnose(s, iterations):
    import tfdiag

    prof = tfdiag.keras.ProfileCallback(batches=(3, 3 + iterations))
    s.model.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[prof])
    return prof.report
