"""Keras 3 on JAX: `fit` on a `keras.utils.PyDataset` that reads and augments every sample in
Python, with the default single worker."""

import time
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="jax-pydataset-no-workers",
    title="fit on my PyDataset is slow on the JAX backend; the CPU is mostly idle",
    source="keras-team/keras#20283; keras-team/keras#21068 (workers/use_multiprocessing moved "
    "to the PyDataset constructor); keras.utils.PyDataset docs ('workers: ... 1 by default')",
    mechanism=(
        "PyDataset.__getitem__ reads each of its 16 samples from storage (~3 ms of latency "
        "per file, simulated with time.sleep, which releases the GIL like a blocking read), "
        "then flips, crops and normalises it in NumPy, on the training thread: with workers=1 "
        "nothing is read while a step runs or while another read waits; the jitted train step "
        "takes about a millisecond"
    ),
    expect="input-bound",
    fix_mentions=("workers",),
    premise=3,
    iterations=4,
    backend="jax",
)

N, BATCH, SIZE = 192, 16, 32
READ_LATENCY_S = 0.003  # per sample file


def make_dataset_class():
    import keras

    class Samples(keras.utils.PyDataset):
        def __init__(self, images, labels, batch_size, **kwargs):
            super().__init__(**kwargs)
            self.images, self.labels, self.batch_size = images, labels, batch_size

        def __len__(self):
            return len(self.images) // self.batch_size

        def _load(self, i):
            time.sleep(READ_LATENCY_S)  # open and read one file
            img = self.images[i]
            if i % 2:
                img = img[:, ::-1]
            img = np.pad(img, ((2, 2), (2, 2), (0, 0)), mode="reflect")[2:-2, 2:-2]
            return (img.astype("float32") - 127.5) / 127.5

        def __getitem__(self, idx):
            lo = idx * self.batch_size
            batch = [self._load(i) for i in range(lo, lo + self.batch_size)]
            return np.stack(batch), self.labels[lo : lo + self.batch_size]

    return Samples


def setup():
    import keras

    rng = np.random.default_rng(29)
    images = rng.integers(0, 256, (N, SIZE, SIZE, 3)).astype("uint8")
    labels = rng.integers(0, 4, (N,)).astype("int32")
    Samples = make_dataset_class()
    slow_data = Samples(images, labels, BATCH)  # workers=1: the default
    fast_data = Samples(images, labels, BATCH, workers=8, use_multiprocessing=False)
    model = keras.Sequential(
        [
            keras.Input((SIZE, SIZE, 3)),
            keras.layers.Conv2D(8, 3, strides=2, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(4),
        ]
    )
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(slow_data, epochs=1, verbose=0)
    model.fit(fast_data, epochs=1, verbose=0)
    return SimpleNamespace(model=model, slow_data=slow_data, fast_data=fast_data)


def slow(s):
    return s.model.fit(s.slow_data, epochs=1, verbose=0)


def fast(s):
    return s.model.fit(s.fast_data, epochs=1, verbose=0)
