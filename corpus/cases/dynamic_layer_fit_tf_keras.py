"""tf_keras `fit` on a model with one custom layer built as a dynamic layer (its `dynamic`
argument set; diagnosed with `ProfileCallback` inside `fit`).

tfdiag reads the line that sets a switch from the user's source text (comments left out), so
the docstrings and strings here do not spell the keyword out: the program's own line does.
"""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="dynamic-layer-fit-tf-keras",
    title="adding one small custom layer made fit several times slower",
    source="tensorflow/tensorflow#34314 and #40507 (a dynamic layer forces the whole "
    "model eager); tf_keras Layer docs ('dynamic: set this to True if your layer should only "
    "be run eagerly')",
    mechanism=(
        "a ScaledResidual layer built as a dynamic layer (its call is plain TensorFlow ops, "
        "graph-compatible) makes tf_keras run the whole train step eagerly on every batch of 8: "
        "one Python dispatch per op of a 6-layer MLP, its gradients and Adam's update; the "
        "program never sets run_eagerly"
    ),
    expect="eager-execution",
    # The layer's keyword, not the word (the case's file name holds "dynamic"); spelled in
    # two parts so that this line is not the one the switch's search finds.
    fix_mentions=("dynamic" + "=True",),
    premise=5,  # 5.2-5.4x measured (--rounds 3, 2026-12-04, two runs)
    iterations=4,
)

N, BATCH = 256, 32


def make_layer_class(keras):
    import tensorflow as tf

    class ScaledResidual(keras.layers.Layer):
        def build(self, input_shape):
            self.scale = self.add_weight(name="scale", shape=(input_shape[-1],), initializer="ones")

        def call(self, x):
            return x + tf.nn.relu(x) * self.scale

        def compute_output_shape(self, input_shape):
            return input_shape

    return ScaledResidual


def setup():
    import tf_keras as keras

    keras.utils.set_random_seed(5)
    ScaledResidual = make_layer_class(keras)

    def build(slow_layer):
        layer = ScaledResidual(dynamic=True) if slow_layer else ScaledResidual()
        m = keras.Sequential(
            [keras.Input((32,))]
            + [keras.layers.Dense(64, activation="relu") for _ in range(6)]
            + [layer, keras.layers.Dense(1)]
        )
        m.compile(keras.optimizers.Adam(1e-3), "mse")
        return m

    model, fixed = build(True), build(False)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((N, 32)).astype("float32")
    y = rng.standard_normal((N, 1)).astype("float32")
    s = SimpleNamespace(model=model, fixed=fixed, x=x, y=y)
    slow(s)  # a dynamic layer's model has its weights only once it has run
    fixed.set_weights(model.get_weights())
    fast(s)
    return s


def slow(s):
    return s.model.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0)


def fast(s):
    # The fix: the layer without dynamic=True (its call traces), so the step is a graph.
    return s.fixed.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0)


def diagnose(s, iterations):
    import tfdiag

    prof = tfdiag.keras.ProfileCallback(batches=(3, 3 + iterations))
    s.model.fit(s.x, s.y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[prof])
    return prof.report
