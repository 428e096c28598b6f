"""tf_keras: `compile(run_eagerly=True)`, then a `train_on_batch` loop."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="run-eagerly-tf-keras",
    title="tf.keras train_on_batch is 10x slower than the same model in my colleague's script",
    source="tensorflow/tensorflow#27472 ('10x performance loss' eager); USGS-R/river-dl PR#109",
    mechanism=(
        "tf_keras compiled with run_eagerly=True: train_on_batch runs the train step "
        "eagerly, one Python op dispatch per op of a 6-layer MLP, its gradients and the update"
    ),
    expect="eager-execution",
    fix_mentions=("run_eagerly",),
    premise=4.3,
    iterations=5,
    also=("per-call-input-pipeline",),
)

BATCHES = 3


def setup():
    import tf_keras as keras

    keras.utils.set_random_seed(19)

    def build(eager):
        m = keras.Sequential(
            [keras.Input((16,))]
            + [keras.layers.Dense(64, activation="relu") for _ in range(6)]
            + [keras.layers.Dense(1)]
        )
        m.compile(keras.optimizers.Adam(1e-3), "mse", run_eagerly=eager)
        return m

    model, fixed = build(True), build(False)
    fixed.set_weights(model.get_weights())
    rng = np.random.default_rng(19)
    xs = rng.standard_normal((BATCHES, 32, 16)).astype("float32")
    ys = rng.standard_normal((BATCHES, 32, 1)).astype("float32")
    s = SimpleNamespace(model=model, fixed=fixed, xs=xs, ys=ys)
    slow(s)
    fast(s)
    return s


def slow(s):
    return [s.model.train_on_batch(x, y) for x, y in zip(s.xs, s.ys)]


def fast(s):
    return [s.fixed.train_on_batch(x, y) for x, y in zip(s.xs, s.ys)]
