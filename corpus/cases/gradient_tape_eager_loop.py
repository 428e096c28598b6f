"""Custom `GradientTape` training loop with no `tf.function`: every op dispatched eagerly."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="gradient-tape-eager-loop",
    title="my GradientTape training loop is much slower than model.fit",
    source="tensorflow/tensorflow#28714; tensorflow/tensorflow#30596; tensorflow/tensorflow"
    "#48844 (mdanatg: eager for debugging, tf.function for production)",
    mechanism=(
        "train_step(x, y) with tape, loss, tape.gradient and apply_gradients runs eagerly: "
        "each of the step's ops is a separate Python dispatch"
    ),
    expect="eager-execution",
    fix_mentions=("tf.function",),
    premise=17,
    iterations=3,
)

BATCHES = 8


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(20)

    def build():
        return keras.Sequential(
            [keras.Input((20,))]
            + [keras.layers.Dense(64, activation="relu") for _ in range(3)]
            + [keras.layers.Dense(3)]
        )

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

    eager_model, graph_model = build(), build()
    graph_model.set_weights(eager_model.get_weights())
    rng = np.random.default_rng(20)
    xs = tf.constant(rng.standard_normal((BATCHES, 32, 20)).astype("float32"))
    ys = tf.constant(rng.integers(0, 3, (BATCHES, 32)).astype("int32"))
    s = SimpleNamespace(
        xs=xs,
        ys=ys,
        eager_step=make_step(eager_model),
        graph_step=tf.function(make_step(graph_model)),
    )
    slow(s)
    fast(s)
    return s


def slow(s):
    return [float(s.eager_step(s.xs[i], s.ys[i])) for i in range(BATCHES)]


def fast(s):
    return [float(s.graph_step(s.xs[i], s.ys[i])) for i in range(BATCHES)]
