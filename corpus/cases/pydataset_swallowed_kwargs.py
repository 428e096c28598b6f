"""Keras 3: a `PyDataset` subclass takes `**kwargs` but never calls `super().__init__(**kwargs)`,
so `workers=8` is silently dropped (profiled as `model.fit` directly)."""

import time
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="pydataset-swallowed-kwargs",
    title="I pass workers=8 to my PyDataset and training is exactly as slow as before",
    source="keras-team/keras#21068 ('Your PyDataset class should call super().__init__"
    "(**kwargs)'; fix PR#21651); keras-team/keras#20283",
    mechanism=(
        "WindowData.__init__(self, ..., **kwargs) stores its arrays but does not forward "
        "kwargs to PyDataset.__init__, so workers=8 never reaches Keras: every batch's "
        "blocking shard read (~25 ms, simulated with time.sleep) and windowing run serially "
        "on the training thread"
    ),
    expect="input-bound",
    fix_mentions=("super().__init__", "workers"),
    premise=1.6,
    iterations=3,
)

N, WIN, BATCH = 640, 64, 32
READ_LATENCY_S = 0.025


def make_classes():
    import keras

    class WindowData(keras.utils.PyDataset):
        """The user's class: kwargs accepted, never forwarded."""

        def __init__(self, signal, labels, batch_size, **kwargs):
            self.signal, self.labels, self.batch_size = signal, labels, batch_size

        def __len__(self):
            return len(self.labels) // self.batch_size

        def __getitem__(self, idx):
            time.sleep(READ_LATENCY_S)  # the shard read from remote storage
            starts = np.arange(idx * self.batch_size, (idx + 1) * self.batch_size)
            windows = np.stack([self.signal[s : s + WIN] for s in starts])
            windows = (windows - windows.mean(axis=1, keepdims=True)) / (
                windows.std(axis=1, keepdims=True) + 1e-6
            )
            return windows.astype("float32"), self.labels[starts]

    class FixedWindowData(WindowData):
        def __init__(self, signal, labels, batch_size, **kwargs):
            super().__init__(signal, labels, batch_size)
            keras.utils.PyDataset.__init__(self, **kwargs)

    return WindowData, FixedWindowData


def setup():
    import warnings

    import keras

    keras.utils.set_random_seed(30)
    rng = np.random.default_rng(30)
    signal = rng.standard_normal(N + WIN).astype("float32")
    labels = rng.integers(0, 2, (N,)).astype("int32")
    WindowData, FixedWindowData = make_classes()
    slow_data = WindowData(signal, labels, BATCH, workers=8, use_multiprocessing=False)
    fast_data = FixedWindowData(signal, labels, BATCH, workers=8, use_multiprocessing=False)
    model = keras.Sequential(
        [keras.Input((WIN,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)]
    )
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Keras' own "should call super().__init__" warning
        model.fit(slow_data, epochs=1, verbose=0)
    model.fit(fast_data, epochs=1, verbose=0)
    return SimpleNamespace(model=model, slow_data=slow_data, fast_data=fast_data)


def slow(s):
    return s.model.fit(s.slow_data, epochs=1, verbose=0)


def fast(s):
    return s.model.fit(s.fast_data, epochs=1, verbose=0)


def target(s):
    return s.model.fit, (s.slow_data,), {"epochs": 1, "verbose": 0}
