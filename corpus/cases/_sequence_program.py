"""One program for three cases (``sequence-workers-*``): a tf_keras ``fit`` on a
``keras.utils.Sequence`` that decodes one PNG per sample, with ``workers=1``.

With one worker tf_keras reads the Sequence through ``tf.data.Dataset.from_generator``:
``__getitem__`` runs on a tf.data thread, and the training thread waits for it inside the
step (cProfile counts that wait as op execution). Run as a script, it is what
``tfdiag run`` diagnoses (``python -m tfdiag run corpus/cases/_sequence_program.py``).
The fix measured is decoding once and keeping the arrays (``workers=4`` with threads made
this tf_keras fit ~10× slower here: 10.4 s against 1.0 s for two epochs).
"""

import io
import time
from types import SimpleNamespace

import numpy as np

N, BATCH, SIZE = 128, 8, 32
#: Per sample: a blocking read (sleep releases the GIL, as a file read does).
READ_S = 0.002
EPOCHS = 2


def make_sequence_class():
    import tf_keras
    from PIL import Image

    class PngImages(tf_keras.utils.Sequence):
        def __init__(self, blobs, labels, batch_size):
            self.blobs, self.labels, self.batch_size = blobs, labels, batch_size

        def __len__(self):
            return len(self.blobs) // self.batch_size

        def __getitem__(self, idx):
            lo, hi = idx * self.batch_size, (idx + 1) * self.batch_size
            imgs = []
            for blob in self.blobs[lo:hi]:
                time.sleep(READ_S)
                with Image.open(io.BytesIO(blob)) as im:
                    im = im.convert("RGB").resize((SIZE, SIZE), Image.BILINEAR)
                    imgs.append(np.asarray(im, dtype="float32") / 255.0)
            return np.stack(imgs), self.labels[lo:hi]

    return PngImages


def setup(warm=True):
    import tf_keras
    from PIL import Image

    tf_keras.utils.set_random_seed(61)
    rng = np.random.default_rng(61)
    blobs = []
    for _ in range(N):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (64, 64, 3)).astype("uint8")).save(buf, "PNG")
        blobs.append(buf.getvalue())
    labels = rng.integers(0, 4, (N,)).astype("int32")
    model = tf_keras.Sequential(
        [
            tf_keras.layers.Conv2D(8, 3, strides=2, activation="relu", input_shape=(SIZE, SIZE, 3)),
            tf_keras.layers.GlobalAveragePooling2D(),
            tf_keras.layers.Dense(4),
        ]
    )
    model.compile("adam", tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    images = make_sequence_class()(blobs, labels, BATCH)
    decoded = [images[i] for i in range(len(images))]  # the fix: decode once, keep it
    s = SimpleNamespace(model=model, data=images, decoded=CachedBatches(decoded))
    if warm:
        slow(s, epochs=1)
        fast(s, epochs=1)
    return s


class CachedBatches:
    """The decoded batches, kept in memory: what the fix's Sequence returns."""

    def __init__(self, batches):
        import tf_keras

        self.seq = type(
            "Cached",
            (tf_keras.utils.Sequence,),
            {
                "__len__": lambda _self: len(batches),
                "__getitem__": lambda _self, i: batches[i],
            },
        )()


def slow(s, epochs=EPOCHS, **kwargs):
    return s.model.fit(s.data, epochs=epochs, verbose=0, workers=1, **kwargs)


def fast(s, epochs=EPOCHS):
    return s.model.fit(s.decoded.seq, epochs=epochs, verbose=0, workers=1)


if __name__ == "__main__":
    slow(setup(warm=False))
