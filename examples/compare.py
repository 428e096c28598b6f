"""Which way of calling my model is fastest on my data? Measure them all, side by side.

    python examples/compare.py
    python examples/compare.py --rows 64

`tfdiag.compare` times predict, predict_on_batch, model(x), a tf.function and more on
your own model and data, and recommends the fastest method whose outputs match.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np

import tfdiag


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=32, help="rows in the input batch")
    args = parser.parse_args()

    model = keras.Sequential(
        [keras.layers.Input((4,)), keras.layers.Dense(2, "relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", "mse")
    x = np.random.default_rng(0).standard_normal((args.rows, 4)).astype("float32")
    result = tfdiag.compare(model, x)
    result.show()


if __name__ == "__main__":
    main()
