"""`map` that fetches each image from (simulated) remote storage, one at a time."""

import time
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="map-no-parallel-calls",
    title="reading my images from the bucket makes each epoch take forever",
    source="tensorflow/tensorflow#42917; tensorflow/tensorflow#33105 (jsimsa: "
    "num_parallel_calls); tensorflow/tensorflow#14448 (boeddeker: only I/O-bound, "
    "GIL-releasing Python scales); tensorflow/docs data_performance.ipynb (ArtificialDataset)",
    mechanism=(
        "ds.map(fetch_and_decode) with no num_parallel_calls: each element waits ~4 ms on a "
        "blocking object-store read (simulated with time.sleep, which releases the GIL like "
        "a socket read) before decode; one element in flight at a time, no prefetch"
    ),
    expect="input-bound",
    fix_mentions=("num_parallel_calls", "prefetch", "interleave"),
    premise=3.6,
    iterations=4,
)

N, BATCH, LATENCY_S = 64, 16, 0.004


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(26)
    rng = np.random.default_rng(26)
    blobs = [
        tf.io.encode_png(rng.integers(0, 256, (32, 32, 3)).astype("uint8")).numpy()
        for _ in range(N)
    ]

    def fetch(key):
        """Stand-in for a GCS/S3 GET: network latency, then the object's bytes."""
        time.sleep(LATENCY_S)
        return blobs[int(key.numpy())]

    def fetch_and_decode(key):
        data = tf.py_function(fetch, [key], tf.string)
        img = tf.io.decode_png(data, channels=3)
        img = tf.ensure_shape(tf.image.convert_image_dtype(img, tf.float32), (32, 32, 3))
        return img, key % 10

    keys = tf.data.Dataset.range(N)
    slow_ds = keys.map(fetch_and_decode).batch(BATCH)
    # The fix: 16 fetches in flight, and the next batch prepared while the step runs. A
    # py_function runs on the inter-op pool (2 threads on this 2-core machine), so the
    # pipeline also gets a private pool big enough for the requests in flight.
    options = tf.data.Options()
    options.threading.private_threadpool_size = 16
    fast_ds = (
        keys.map(fetch_and_decode, num_parallel_calls=16)
        .batch(BATCH)
        .prefetch(tf.data.AUTOTUNE)
        .with_options(options)
    )
    model = keras.Sequential(
        [
            keras.Input((32, 32, 3)),
            keras.layers.Conv2D(8, 3, strides=2, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(10),
        ]
    )
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    s = SimpleNamespace(slow_ds=slow_ds, fast_ds=fast_ds, train_step=train_step)
    fast(s)
    return s


def train_epoch(ds, train_step):
    return float(sum(train_step(x, y) for x, y in ds))


def slow(s):
    return train_epoch(s.slow_ds, s.train_step)


def fast(s):
    return train_epoch(s.fast_ds, s.train_step)


def target(s):
    return train_epoch, (s.slow_ds, s.train_step), {}
