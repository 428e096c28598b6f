"""Keras 3 on JAX: `fit` with a user callback that logs weight statistics after every batch
(diagnosed with `ProfileCallback` inside `fit`)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-heavy-user-callback",
    title="Callback method on_train_batch_end is slow compared to the batch time (JAX)",
    source="tensorflow/tensorflow#37876 (batch 0.0027 s vs on_train_batch_end 0.4677 s); "
    "keras-team/keras#608 (the warning exists to catch heavy callbacks); mwalmsley/zoobot#56",
    mechanism=(
        "WeightStats.on_train_batch_end calls model.get_weights() (every JAX array copied to "
        "NumPy) and computes per-layer norms, percentiles and histograms after every one of "
        "64 batches; the jitted train step itself takes about a millisecond"
    ),
    expect="callback-overhead",
    fix_mentions=("on_epoch_end", "every N"),
    premise=5,
    iterations=10,
    backend="jax",
)

N, BATCH = 1024, 16


def make_callback(per_batch):
    import keras

    class WeightStats(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.rows = []

        def _record(self):
            weights = self.model.get_weights()
            self.rows.append(
                [
                    (
                        float(np.linalg.norm(w)),
                        np.percentile(w, [1, 50, 99]),
                        np.histogram(w, bins=50)[0],
                    )
                    for w in weights
                ]
            )

        def on_train_batch_end(self, batch, logs=None):
            if per_batch:
                self._record()

        def on_epoch_end(self, epoch, logs=None):
            if not per_batch:
                self._record()

    return WeightStats()


def setup():
    import keras

    model = keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(10),
        ]
    )
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(33)
    x = rng.standard_normal((N, 64)).astype("float32")
    y = rng.integers(0, 10, (N,)).astype("int32")
    model.fit(x[:64], y[:64], batch_size=BATCH, verbose=0)
    return SimpleNamespace(model=model, x=x, y=y)


def slow(s):
    cb = make_callback(per_batch=True)
    return s.model.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[cb])


def fast(s):
    # The fix: the same statistics once per epoch (the training work is unchanged).
    cb = make_callback(per_batch=False)
    return s.model.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[cb])


def diagnose(s, iterations):
    import tfdiag

    prof = tfdiag.keras.ProfileCallback(batches=(3, 3 + iterations))
    s.model.fit(
        s.x,
        s.y,
        batch_size=BATCH,
        epochs=1,
        verbose=0,
        callbacks=[make_callback(per_batch=True), prof],
    )
    return prof.report
