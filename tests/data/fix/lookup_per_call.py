"""A StringLookup built on every call of encode (tfdiag fix: hoist)."""

import keras
import numpy as np

VOCAB = [f"w{i}" for i in range(3000)]
words = np.array(VOCAB[:64])


def encode(batch):
    lookup = keras.layers.StringLookup(vocabulary=VOCAB)
    return lookup(batch)


total = 0
for _ in range(40):
    total += int(np.asarray(encode(words)).sum())
print("ids", total)
