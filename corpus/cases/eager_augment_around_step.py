"""A custom loop whose train step is a `tf.function`, but whose per-image augmentation
(flip, brightness, crop after padding) runs eagerly in Python before each step."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="eager-augment-around-step",
    title="my train step is a tf.function and the loop is still slow",
    source="https://www.tensorflow.org/tutorials/images/data_augmentation (apply the "
    "augmentation with Dataset.map or inside the model); keras-team/autokeras#669 (use "
    "tf.data and tf.image for augmentation); tensorflow/tensorflow#33487 (TF2 slower "
    "than TF1: eager ops around the model)",
    mechanism=(
        "for each of 32 images per batch, augment() runs random_flip_left_right, "
        "random_brightness, pad_to_bounding_box and random_crop eagerly (one Python "
        "dispatch each), then tf.stack, before the compiled step: ~130 eager ops beside "
        "one graph call per batch; the same augmentation inside the tf.function (batched "
        "image ops) is the fix"
    ),
    expect="eager-execution",
    fix_mentions=("tf.function",),
    premise=30,
    iterations=3,
)

BATCHES, BATCH = 4, 32


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(86)

    def build():
        return keras.Sequential(
            [
                keras.Input((32, 32, 3)),
                keras.layers.Conv2D(8, 3, activation="relu"),
                keras.layers.GlobalAveragePooling2D(),
                keras.layers.Dense(10),
            ]
        )

    def augment(image):
        image = tf.image.random_flip_left_right(image)
        image = tf.image.random_brightness(image, 0.1)
        image = tf.image.pad_to_bounding_box(image, 2, 2, 36, 36)
        return tf.image.random_crop(image, (32, 32, 3))

    def make_step(model):
        opt = keras.optimizers.Adam(1e-3)
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        return train_step

    m1, m2 = build(), build()
    m2.set_weights(m1.get_weights())
    step = tf.function(make_step(m1))
    inner = make_step(m2)

    @tf.function
    def augment_and_step(x, y):
        x = tf.stack([augment(x[i]) for i in range(BATCH)])
        return inner(x, y)

    rng = np.random.default_rng(86)
    xs = tf.constant(rng.random((BATCHES, BATCH, 32, 32, 3)).astype("float32"))
    ys = tf.constant(rng.integers(0, 10, (BATCHES, BATCH)).astype("int32"))
    s = SimpleNamespace(xs=xs, ys=ys, step=step, augment=augment, fused=augment_and_step, tf=tf)
    slow(s)
    fast(s)
    return s


def slow(s):
    losses = []
    for b in range(BATCHES):
        x = s.tf.stack([s.augment(s.xs[b, i]) for i in range(BATCH)])
        losses.append(float(s.step(x, s.ys[b])))
    return losses


def fast(s):
    # The fix: the same per-image augmentation inside the compiled step.
    return [float(s.fused(s.xs[b], s.ys[b])) for b in range(BATCHES)]
