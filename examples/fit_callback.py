"""Profile training batches inside a real `fit()` with a callback.

    python examples/fit_callback.py                       # batches 10-30 of 2 epochs
    python examples/fit_callback.py --flavour tf_keras
    python examples/fit_callback.py --steps 12 --batches 4 8 --epochs 1

Batches are counted from 1 across epochs (as TensorBoard's `profile_batch`); the
first profiled batch plays the cold call, the others are the steady state, and
every other batch of the fit is timed for the iteration timeline.
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
        [keras.layers.Input((4,)), keras.layers.Dense(8, "relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", "mse")
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flavour", choices=("keras3", "tf_keras"), default="keras3")
    parser.add_argument("--steps", type=int, default=40, help="batches per epoch")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batches", type=int, nargs=2, default=(10, 30))
    parser.add_argument("--save", help="save the report here (.tfdiag.json + .prof)")
    args = parser.parse_args()

    model = build_model(args.flavour)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32 * args.steps, 4)).astype("float32")
    y = rng.standard_normal((32 * args.steps, 1)).astype("float32")
    callback = tfdiag.keras.ProfileCallback(
        batches=tuple(args.batches), save=args.save, overwrite=True
    )
    model.fit(x, y, batch_size=32, epochs=args.epochs, verbose=0, callbacks=[callback])
    if callback.report is None:
        raise SystemExit("fit ended before the profiled batches")
    callback.report.show()
    print("findings:", ", ".join(f.id for f in callback.report.findings) or "none")


if __name__ == "__main__":
    main()
