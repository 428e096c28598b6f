"""model.predict called on every batch of an in-memory array (tfdiag fix: predict-on-batch)."""

import keras
import numpy as np

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])
x = np.random.default_rng(0).random((160, 4), dtype=np.float32)
total = 0.0
for i in range(0, 160, 8):
    y = model.predict(x[i : i + 8], verbose=0)  # one batch at a time
    total += float(y.sum())
print(f"total {total:.4f}")
