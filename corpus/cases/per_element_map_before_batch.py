"""`map` of a cheap normalisation per element, then `batch`: per-element overhead dominates."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="per-element-map-before-batch",
    title="tf.data is 15x slower than feeding NumPy batches",
    source="tensorflow/tensorflow#31616 (81 ms/item vs 5.28 ms/item); aianaconda/"
    "TensorFlow_Engineering_Implementation#4 (DLPerf: batch() should be called before map()); "
    "tensorflow/docs data_performance.ipynb (vectorized mapping)",
    mechanism=(
        "from_tensor_slices(X).map(normalise).batch(256): the map function runs once per "
        "row (4096 function invocations per epoch) for a few element-wise ops; batching "
        "first runs it 16 times on whole batches"
    ),
    expect="input-bound",
    fix_mentions=("vectoriz", "before map", "before `map", "before `.map"),
    premise=3.5,
    iterations=5,
)

N, F, BATCH = 4096, 16, 256


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(28)
    rng = np.random.default_rng(28)
    X = (rng.standard_normal((N, F)) * 5 + 2).astype("float32")
    Y = rng.standard_normal((N, 1)).astype("float32")
    mean, std = X.mean(axis=0), X.std(axis=0)

    def normalise(x, y):
        x = (x - mean) / std
        return tf.clip_by_value(x, -4.0, 4.0), y * 0.5

    base = tf.data.Dataset.from_tensor_slices((X, Y))
    slow_ds = base.map(normalise).batch(BATCH)
    fast_ds = base.batch(BATCH).map(normalise)

    model = keras.Sequential(
        [keras.Input((F,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
    )
    opt = keras.optimizers.SGD(0.01)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    s = SimpleNamespace(slow_ds=slow_ds, fast_ds=fast_ds, train_step=train_step)
    fast(s)
    return s


def train_epoch(ds, train_step):
    """The user's loop: one compiled step per batch, loss read once at the end."""
    total = 0.0
    for x, y in ds:
        total += train_step(x, y)
    return float(total)


def slow(s):
    return train_epoch(s.slow_ds, s.train_step)


def fast(s):
    return train_epoch(s.fast_ds, s.train_step)


def target(s):
    return train_epoch, (s.slow_ds, s.train_step), {}
