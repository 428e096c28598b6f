"""Inference loop calling a deep-ish Keras model eagerly: `model(x)` layer by layer."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="eager-model-call-deep",
    title="switching from predict to model(x) made small batches fast but my deep model slow",
    source="tensorflow/tensorflow#33340 (why does model(x) run step by step?); "
    "keras-team/keras#10331; tensorflow/tensorflow#46126 (model.call = tf.function(model.call))",
    mechanism=(
        "model(x, training=False) outside a tf.function runs each of ~40 layers eagerly "
        "(Layer.__call__ bookkeeping plus one dispatch per op) for every batch"
    ),
    expect="eager-execution",
    fix_mentions=("tf.function",),
    premise=31,
    iterations=5,
)

BATCHES = 3


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(21)
    inp = keras.Input((64,))
    h = keras.layers.Dense(64)(inp)
    for _ in range(10):  # residual MLP blocks: Dense, LayerNorm, activation, add
        r = keras.layers.Dense(64)(h)
        r = keras.layers.LayerNormalization()(r)
        r = keras.layers.Activation("gelu")(r)
        h = keras.layers.Add()([h, r])
    out = keras.layers.Dense(10)(h)
    model = keras.Model(inp, out)
    rng = np.random.default_rng(21)
    xs = [tf.constant(rng.standard_normal((8, 64)).astype("float32")) for _ in range(BATCHES)]
    infer = tf.function(lambda x: model(x, training=False))
    s = SimpleNamespace(model=model, xs=xs, infer=infer)
    slow(s)
    fast(s)
    return s


def slow(s):
    return [s.model(x, training=False).numpy() for x in s.xs]


def fast(s):
    return [s.infer(x).numpy() for x in s.xs]
