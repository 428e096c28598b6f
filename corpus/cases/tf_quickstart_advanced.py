"""TensorFlow 2 quickstart for experts, run as written: a subclassed conv model, a
`tf.function` train_step and test_step over shuffled, batched MNIST, the metrics reset each
epoch. MNIST is replaced by synthetic 28x28x1 images of its dtype and range; one iteration
is one epoch over 10 training and 5 test batches of 32."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="tf-quickstart-advanced",
    title="the advanced quickstart's epoch is slow on my CPU; what else can I change?",
    source="https://www.tensorflow.org/tutorials/quickstart/advanced (tensorflow/docs "
    "site/en/tutorials/quickstart/advanced.ipynb); "
    "https://www.tensorflow.org/xla (jit_compile=True on a tf.function)",
    mechanism=(
        "the step is already one graph call per batch and the data is in memory: the time "
        "is the model's own ops (a 3x3x32 conv on 28x28, then a 21632x128 Dense, forward "
        "and backward); the candidate Python-side change, compiling both steps with XLA "
        "(@tf.function(jit_compile=True)), is slower here on CPU (0.64x)"
    ),
    expect="compute-bound",
    fix_mentions=("won't help", "smaller model"),
    premise=1.0,
    iterations=2,
    python_fix=False,
)

N_TRAIN, N_TEST, BATCH = 320, 160, 32


def setup():
    import keras
    import tensorflow as tf
    from keras.layers import Conv2D, Dense, Flatten

    keras.utils.set_random_seed(72)
    rng = np.random.default_rng(72)
    x_train = rng.integers(0, 256, (N_TRAIN, 28, 28)).astype("uint8") / 255.0
    x_test = rng.integers(0, 256, (N_TEST, 28, 28)).astype("uint8") / 255.0
    y_train = rng.integers(0, 10, (N_TRAIN,)).astype("uint8")
    y_test = rng.integers(0, 10, (N_TEST,)).astype("uint8")
    x_train = x_train[..., tf.newaxis].astype("float32")
    x_test = x_test[..., tf.newaxis].astype("float32")
    train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000).batch(32)
    test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(32)

    class MyModel(keras.Model):
        def __init__(self):
            super().__init__()
            self.conv1 = Conv2D(32, 3, activation="relu")
            self.flatten = Flatten()
            self.d1 = Dense(128, activation="relu")
            self.d2 = Dense(10)

        def call(self, x):
            x = self.conv1(x)
            x = self.flatten(x)
            x = self.d1(x)
            return self.d2(x)

    def make_program(jit):
        model = MyModel()
        loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        optimizer = keras.optimizers.Adam()
        train_loss = keras.metrics.Mean(name="train_loss")
        train_accuracy = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
        test_loss = keras.metrics.Mean(name="test_loss")
        test_accuracy = keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

        @tf.function(jit_compile=jit)
        def train_step(images, labels):
            with tf.GradientTape() as tape:
                predictions = model(images, training=True)
                loss = loss_object(labels, predictions)
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            train_loss(loss)
            train_accuracy(labels, predictions)

        @tf.function(jit_compile=jit)
        def test_step(images, labels):
            predictions = model(images, training=False)
            t_loss = loss_object(labels, predictions)
            test_loss(t_loss)
            test_accuracy(labels, predictions)

        def epoch():
            train_loss.reset_state()
            train_accuracy.reset_state()
            test_loss.reset_state()
            test_accuracy.reset_state()
            for images, labels in train_ds:
                train_step(images, labels)
            for test_images, test_labels in test_ds:
                test_step(test_images, test_labels)
            return float(train_loss.result()), float(test_accuracy.result())

        return epoch

    s = SimpleNamespace(epoch=make_program(False), xla_epoch=make_program(True))
    slow(s)
    fast(s)
    return s


def slow(s):
    return s.epoch()


def fast(s):
    # The best Python-side candidate: the same train_step and test_step compiled with XLA.
    return s.xla_epoch()
