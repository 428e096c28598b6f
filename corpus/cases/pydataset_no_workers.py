"""Keras 3 `fit` on a `keras.utils.PyDataset` that loads and decodes image files, with the
default single worker (diagnosed with `ProfileCallback` inside `fit`)."""

import os
import tempfile
import time
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="pydataset-no-workers",
    title="after moving from Sequence to PyDataset my training is several times slower",
    source="keras-team/keras#20283; keras-team/keras#21068 (workers/use_multiprocessing moved "
    "to the PyDataset constructor); keras-team/keras#9502",
    mechanism=(
        "PyDataset.__getitem__ reads 16 PNG files per batch from a network file system "
        "(~50 ms per batch of latency, simulated with time.sleep, which releases the GIL like "
        "a blocking read), then decodes and resizes them with PIL, on the training thread: "
        "with workers=1 nothing is read while a step runs or while another read waits"
    ),
    expect="input-bound",
    fix_mentions=("workers",),
    premise=1.5,
    iterations=6,
)

N, BATCH, SIZE = 192, 16, 32
READ_LATENCY_S = 0.05  # per batch: ~3 ms per small file on a network file system


def _write_images(rng):
    from PIL import Image

    folder = tempfile.mkdtemp(prefix="tfdiag-corpus-png-")
    paths = []
    for i in range(N):
        arr = rng.integers(0, 256, (96, 96, 3)).astype("uint8")
        path = os.path.join(folder, f"{i:04d}.png")
        Image.fromarray(arr).save(path)
        paths.append(path)
    return paths


def make_dataset_class():
    import keras
    from PIL import Image

    class ImageFiles(keras.utils.PyDataset):
        def __init__(self, paths, labels, batch_size, **kwargs):
            super().__init__(**kwargs)
            self.paths, self.labels, self.batch_size = paths, labels, batch_size

        def __len__(self):
            return len(self.paths) // self.batch_size

        def __getitem__(self, idx):
            sl = slice(idx * self.batch_size, (idx + 1) * self.batch_size)
            time.sleep(READ_LATENCY_S)
            imgs = []
            for p in self.paths[sl]:
                with Image.open(p) as im:
                    im = im.convert("RGB").resize((SIZE, SIZE), Image.BICUBIC)
                    imgs.append(np.asarray(im, dtype="float32") / 255.0)
            return np.stack(imgs), self.labels[sl]

    return ImageFiles


def setup():
    import keras

    keras.utils.set_random_seed(29)
    rng = np.random.default_rng(29)
    paths = _write_images(rng)
    labels = rng.integers(0, 4, (N,)).astype("int32")
    ImageFiles = make_dataset_class()
    slow_data = ImageFiles(paths, labels, BATCH)  # workers=1: the default
    fast_data = ImageFiles(paths, labels, BATCH, workers=8, use_multiprocessing=False)
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
    return SimpleNamespace(model=model, slow_data=slow_data, fast_data=fast_data)


def slow(s):
    return s.model.fit(s.slow_data, epochs=1, verbose=0)


def fast(s):
    return s.model.fit(s.fast_data, epochs=1, verbose=0)


def diagnose(s, iterations):
    import tfdiag

    cb = tfdiag.keras.ProfileCallback(batches=(3, 3 + iterations))
    s.model.fit(s.slow_data, epochs=1, verbose=0, callbacks=[cb])
    return cb.report
