import keras
import numpy as np
import tensorflow as tf

M = np.random.default_rng(1).random((256, 256), dtype=np.float32)


def smooth(x):
    return np.tanh(x @ M / 64).astype(np.float32)


def augment(x, y):
    x = tf.numpy_function(smooth, [x], tf.float32)
    return tf.reshape(x, (16, 256)), y


keras.utils.set_random_seed(0)
data = np.random.default_rng(0).random((512, 16, 256), dtype=np.float32)
ds = tf.data.Dataset.from_tensor_slices((data, data[:, 0, :1])).map(augment).batch(32)
model = keras.Sequential([keras.Input((16, 256)), keras.layers.Flatten(), keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.fit(ds, epochs=3, verbose=0)
print(f"loss {model.evaluate(ds, verbose=0):.4f}")
