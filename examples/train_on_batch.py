"""A custom training loop with `train_on_batch`: where does each step's time go?

    python examples/train_on_batch.py
    python examples/train_on_batch.py --flavour tf_keras --iterations 5

The seeds measured `train_on_batch` against `fit` and a `tf.function` step; tfdiag
shows what each call of it does (data adapter, tracing, conversion, ops).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np

import tfdiag


def build_model(flavour: str):  # a stand-in for your own model
    if flavour == "tf_keras":
        import tf_keras as keras
    else:
        import keras
    model = keras.Sequential(
        [keras.layers.Input((4,)), keras.layers.Dense(2, "relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", "mse")
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flavour", choices=("keras3", "tf_keras"), default="keras3")
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()

    model = build_model(args.flavour)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype("float32")
    y = rng.standard_normal((32, 1)).astype("float32")
    report = tfdiag.profile(model.train_on_batch, x, y, iterations=args.iterations)
    report.show()
    print("findings:", ", ".join(f.id for f in report.findings) or "none")


if __name__ == "__main__":
    main()
