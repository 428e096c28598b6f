"""tf_keras `fit` with a callback that runs `model.predict` on a validation batch after every
training batch (diagnosed with `ProfileCallback` inside `fit`)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="callback-predict-per-batch",
    title="WARNING: Callback method `on_train_batch_end` is slow compared to the batch time",
    source="tensorflow/tensorflow#37876; keras-team/keras#608; icenet-ai/icenet#7; "
    "tensorflow/docs gpu_performance_analysis.md ('metric calculations, Keras callbacks')",
    mechanism=(
        "ValAUC.on_train_batch_end calls self.model.predict(x_val) and an AUC in NumPy after "
        "every training batch to plot a live curve; each predict builds its own data pipeline "
        "and callbacks, so the callback costs many times the 1 ms train step"
    ),
    expect="callback-overhead",
    fix_mentions=("on_epoch_end", "every N"),
    premise=2.7,
    iterations=5,
    also=("per-call-input-pipeline", "per-iteration-tracing"),
)

N, BATCH = 256, 32


def _auc(y, p):
    order = np.argsort(p)
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / max(n_pos * n_neg, 1)


def make_callback(x_val, y_val, per_batch):
    import tf_keras as keras

    class ValAUC(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.curve = []

        def _record(self):
            p = self.model.predict(x_val, verbose=0).ravel()
            self.curve.append(_auc(y_val, p))

        def on_train_batch_end(self, batch, logs=None):
            if per_batch:
                self._record()

        def on_epoch_end(self, epoch, logs=None):
            if not per_batch:
                self._record()

    return ValAUC()


def setup():
    import tf_keras as keras

    keras.utils.set_random_seed(38)
    model = keras.Sequential(
        [
            keras.Input((20,)),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile("adam", "binary_crossentropy")
    rng = np.random.default_rng(38)
    x = rng.standard_normal((N, 20)).astype("float32")
    y = rng.integers(0, 2, (N, 1)).astype("float32")
    x_val = rng.standard_normal((64, 20)).astype("float32")
    y_val = rng.integers(0, 2, 64)
    s = SimpleNamespace(model=model, x=x, y=y, x_val=x_val, y_val=y_val)
    fast(s)
    return s


def _fit(s, per_batch, extra=()):
    cb = make_callback(s.x_val, s.y_val, per_batch)
    return s.model.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[cb, *extra])


def slow(s):
    return _fit(s, per_batch=True)


def fast(s):
    return _fit(s, per_batch=False)


def diagnose(s, iterations):
    import tfdiag

    prof = tfdiag.keras.ProfileCallback(batches=(2, 2 + iterations))
    _fit(s, per_batch=True, extra=[prof])
    return prof.report
