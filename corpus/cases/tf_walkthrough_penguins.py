"""TensorFlow's custom-training walkthrough (penguins), run as written: an eager
`GradientTape` loop over a batched dataset, with the epoch's loss and accuracy metrics
updated from Python after every step. The penguin CSV is replaced by synthetic arrays of
its shapes (4 float features, 3 classes); one iteration is one epoch of the loop."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="tf-walkthrough-penguins",
    title="the official custom-training walkthrough is slow per epoch; is eager the cause?",
    source="https://www.tensorflow.org/tutorials/customization/custom_training_walkthrough "
    "(tensorflow/docs site/en/tutorials/customization/custom_training_walkthrough.ipynb); "
    "tensorflow/tensorflow#48844 (eager for debugging, tf.function for speed)",
    mechanism=(
        "for each batch, grad() (forward, loss, tape.gradient) and apply_gradients run "
        "eagerly, then epoch_accuracy.update_state(y, model(x, training=True)) runs a second "
        "eager forward pass: every op of the 4-10-10-3 MLP, the SGD update and both "
        "metrics is a Python dispatch; the whole batch body in one tf.function is the fix"
    ),
    expect="eager-execution",
    fix_mentions=("update_state", "per-batch body", "whole batch body"),
    premise=4.5,
    iterations=4,
)

N, BATCH = 256, 32


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(71)
    rng = np.random.default_rng(71)
    features = rng.standard_normal((N, 4)).astype("float32")
    labels = rng.integers(0, 3, (N,)).astype("int64")
    ds_train_batch = tf.data.Dataset.from_tensor_slices((features, labels)).batch(BATCH)

    def build():
        return keras.Sequential(
            [
                keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),
                keras.layers.Dense(10, activation=tf.nn.relu),
                keras.layers.Dense(3),
            ]
        )

    loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def make_program(model):
        optimizer = keras.optimizers.SGD(learning_rate=0.01)

        def loss(model, x, y, training):
            y_ = model(x, training=training)
            return loss_object(y_true=y, y_pred=y_)

        def grad(model, inputs, targets):
            with tf.GradientTape() as tape:
                loss_value = loss(model, inputs, targets, training=True)
            return loss_value, tape.gradient(loss_value, model.trainable_variables)

        def batch_body(x, y, epoch_loss_avg, epoch_accuracy):
            loss_value, grads = grad(model, x, y)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            epoch_loss_avg.update_state(loss_value)
            epoch_accuracy.update_state(y, model(x, training=True))

        return batch_body

    eager_model, graph_model = build(), build()
    graph_model.set_weights(eager_model.get_weights())
    s = SimpleNamespace(
        ds=ds_train_batch,
        eager_body=make_program(eager_model),
        graph_body=tf.function(make_program(graph_model)),
        train_loss_results=[],
        train_accuracy_results=[],
    )
    s.loss_avg = {k: keras.metrics.Mean() for k in ("slow", "fast")}
    s.accuracy = {k: keras.metrics.SparseCategoricalAccuracy() for k in ("slow", "fast")}
    slow(s)
    fast(s)
    return s


def one_epoch(s, body, key):
    # The walkthrough makes new metrics every epoch; here they are reset (a tf.function
    # that closed over new metric objects would retrace every epoch).
    epoch_loss_avg, epoch_accuracy = s.loss_avg[key], s.accuracy[key]
    epoch_loss_avg.reset_state()
    epoch_accuracy.reset_state()
    for x, y in s.ds:
        body(x, y, epoch_loss_avg, epoch_accuracy)
    s.train_loss_results.append(epoch_loss_avg.result())
    s.train_accuracy_results.append(epoch_accuracy.result())


def slow(s):
    one_epoch(s, s.eager_body, "slow")


def fast(s):
    # The fix: the whole batch body (step, metric updates, their forward pass) in one
    # tf.function, built once.
    one_epoch(s, s.graph_body, "fast")
