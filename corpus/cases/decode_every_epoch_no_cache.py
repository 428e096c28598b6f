"""Image pipeline that decodes and resizes every PNG again in every epoch (no `cache`)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="decode-every-epoch-no-cache",
    title="every epoch is as slow as the first although the images never change",
    source="tensorflow/docs data_performance.ipynb ('cache after expensive deterministic "
    "steps'); XProf tf.data bottleneck suggestions (Map: consider cache); "
    "tensorflow/tensorflow#42917",
    mechanism=(
        "ds.map(decode_and_resize) recomputes the same deterministic PNG decode, bicubic resize "
        "and standardisation for every image in every epoch; the small conv step waits on it"
    ),
    expect="input-bound",
    fix_mentions=(".cache", "`cache`", "cache()"),
    premise=4.1,
    iterations=5,
)

N, BATCH = 256, 32


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(25)
    rng = np.random.default_rng(25)
    images = rng.integers(0, 256, (N, 192, 192, 3)).astype("uint8")
    encoded = tf.constant([tf.io.encode_png(img).numpy() for img in images])
    labels = rng.integers(0, 10, (N,)).astype("int32")
    base = tf.data.Dataset.from_tensor_slices((encoded, labels))

    def augment(png, label):
        img = tf.io.decode_png(png, channels=3)
        img = tf.image.convert_image_dtype(img, tf.float32)
        img = tf.image.resize(img, (48, 48), method="bicubic")
        img = tf.image.flip_left_right(img)
        img = tf.image.adjust_contrast(img, 1.2)
        img = tf.image.per_image_standardization(img)
        return img, label

    slow_ds = base.map(augment).batch(BATCH)
    fast_ds = base.map(augment).cache().batch(BATCH)

    model = keras.Sequential(
        [
            keras.Input((48, 48, 3)),
            keras.layers.Conv2D(8, 3, strides=4, activation="relu"),
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
    fast(s)  # fills the cache: the first epoch of the fixed pipeline
    return s


def train_epoch(ds, train_step):
    losses = [train_step(x, y) for x, y in ds]
    return float(sum(losses))


def slow(s):
    return train_epoch(s.slow_ds, s.train_step)


def fast(s):
    return train_epoch(s.fast_ds, s.train_step)


def target(s):
    return train_epoch, (s.slow_ds, s.train_step), {}
