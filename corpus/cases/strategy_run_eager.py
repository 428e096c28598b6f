"""A custom training loop under `tf.distribute.MirroredStrategy` that calls `strategy.run`
from plain Python, without the `tf.function` the distributed-training guide wraps it in."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="strategy-run-eager",
    title="my MirroredStrategy custom loop is much slower than the same loop without it",
    source="https://www.tensorflow.org/tutorials/distribute/custom_training (the "
    "distributed_train_step is a tf.function); tensorflow/tensorflow#27195 (strategy run "
    "without tf.function: 63.6 s vs 2.6 s for 1000 steps); tensorflow/tensorflow#30855 "
    "('Using MirroredStrategy eagerly has significant overhead')",
    mechanism=(
        "distributed_train_step runs strategy.run(train_step) and strategy.reduce "
        "eagerly for each of 8 batches: the replica context, forward, loss, gradients, "
        "the cross-replica reduction and Adam are dispatched op by op from Python; "
        "the same distributed_train_step decorated with @tf.function is the fix"
    ),
    expect="eager-execution",
    fix_mentions=("tf.function",),
    premise=4,
    iterations=3,
)

BATCHES, BATCH = 8, 64


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(84)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    rng = np.random.default_rng(84)
    x = rng.standard_normal((BATCHES * BATCH, 32)).astype("float32")
    y = rng.integers(0, 10, (BATCHES * BATCH,)).astype("int32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)
    dist_ds = strategy.experimental_distribute_dataset(ds)

    def make_program():
        with strategy.scope():
            model = keras.Sequential(
                [
                    keras.Input((32,)),
                    keras.layers.Dense(64, activation="relu"),
                    keras.layers.Dense(64, activation="relu"),
                    keras.layers.Dense(10),
                ]
            )
            optimizer = keras.optimizers.Adam(1e-3)
            loss_object = keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, reduction="none"
            )

        def compute_loss(labels, predictions):
            per_example_loss = loss_object(labels, predictions)
            return tf.nn.compute_average_loss(per_example_loss, global_batch_size=BATCH)

        def train_step(inputs):
            images, labels = inputs
            with tf.GradientTape() as tape:
                predictions = model(images, training=True)
                loss = compute_loss(labels, predictions)
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            return loss

        def distributed_train_step(dataset_inputs):
            per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
            return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

        return model, distributed_train_step

    m1, eager_step = make_program()
    m2, step = make_program()
    m2.set_weights(m1.get_weights())
    s = SimpleNamespace(dist_ds=dist_ds, eager_step=eager_step, graph_step=tf.function(step))
    slow(s)
    fast(s)
    return s


def epoch(s, step):
    total_loss, num_batches = 0.0, 0
    for x in s.dist_ds:
        total_loss += step(x)
        num_batches += 1
    return float(total_loss / num_batches)


def slow(s):
    return epoch(s, s.eager_step)


def fast(s):
    # The fix: distributed_train_step decorated with @tf.function, as in the guide.
    return epoch(s, s.graph_step)
