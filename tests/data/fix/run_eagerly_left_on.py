"""compile(run_eagerly=True) left on after debugging (tfdiag fix: remove-switch)."""

import keras
import numpy as np

keras.utils.set_random_seed(1)
model = keras.Sequential(
    [keras.Input((8,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)]
)
model.compile("sgd", "mse", run_eagerly=True)
x = np.random.default_rng(1).random((1024, 8), dtype=np.float32)
y = x.sum(axis=1, keepdims=True)
hist = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
print(f"loss {hist.history['loss'][-1]:.2f}")
