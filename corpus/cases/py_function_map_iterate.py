"""Custom loop over a `tf.data` pipeline that parses CSV lines with `tf.py_function`."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="py-function-map-iterate",
    title="my training loop spends most of its time waiting for the next batch",
    source="tensorflow/tensorflow#15694; tensorflow/tensorflow#44274; tensorflow/tensorflow"
    "#32454 (py_function in map; mdanatg/jsimsa: write it in TF ops)",
    mechanism=(
        "lines.map(tf.py_function(parse_line)): each CSV line is split and converted in "
        "Python under the GIL, one call per line; tf.io.decode_csv does the same in C++"
    ),
    expect="input-bound",
    fix_mentions=("py_function", "decode_csv"),
    premise=3.4,
    iterations=3,
)

N, FEATURES, BATCH = 1024, 10, 64


def parse_line(line):
    """The user's parser: split a CSV line in Python."""
    fields = [float(v) for v in line.numpy().decode().split(",")]
    return np.asarray(fields[:-1], "float32"), np.asarray(fields[-1:], "float32")


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(24)
    rng = np.random.default_rng(24)
    table = rng.standard_normal((N, FEATURES + 1)).round(4)
    lines = tf.constant([",".join(f"{v:.4f}" for v in row) for row in table])
    base = tf.data.Dataset.from_tensor_slices(lines)

    def py_parse(line):
        x, y = tf.py_function(parse_line, [line], (tf.float32, tf.float32))
        return tf.ensure_shape(x, (FEATURES,)), tf.ensure_shape(y, (1,))

    def tf_parse(line):
        cols = tf.io.decode_csv(line, [[0.0]] * (FEATURES + 1))
        return tf.stack(cols[:-1]), tf.stack(cols[-1:])

    slow_ds = base.map(py_parse).batch(BATCH)
    fast_ds = base.map(tf_parse).batch(BATCH)

    model = keras.Sequential(
        [keras.Input((FEATURES,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
    )
    opt = keras.optimizers.Adam(1e-3)

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
    """The user's loop."""
    total = 0.0
    for x, y in ds:
        total += float(train_step(x, y))
    return total


def slow(s):
    return train_epoch(s.slow_ds, s.train_step)


def fast(s):
    return train_epoch(s.fast_ds, s.train_step)


def target(s):
    return train_epoch, (s.slow_ds, s.train_step), {}
