"""model.fit called once per epoch in a loop (tfdiag fix: one-fit)."""

import keras
import numpy as np

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])
model.compile("sgd", "mse")
rng = np.random.default_rng(0)
x = rng.random((64, 4), dtype=np.float32)
y = x.sum(axis=1, keepdims=True)
for _epoch in range(50):
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)  # one epoch per call
print(f"loss {float(model.evaluate(x, y, verbose=0)):.4f}")
