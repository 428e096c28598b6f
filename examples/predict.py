"""Why is `model.predict` slow on a small batch, and what should I call instead?

    python examples/predict.py                      # 20 iterations, Keras 3
    python examples/predict.py --flavour tf_keras   # the same under tf_keras
    python examples/predict.py --iterations 3 --save predict.tfdiag.json

Then `python -m tfdiag explain predict.tfdiag.json` re-renders the saved report, and
`--plot predict.png` draws its iteration timeline.
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
    parser.add_argument("--save", help="save the report here (.tfdiag.json + .prof)")
    args = parser.parse_args()

    model = build_model(args.flavour)
    x = np.random.default_rng(0).standard_normal((32, 4)).astype("float32")
    report = tfdiag.profile(model.predict, x, iterations=args.iterations, verbose=0)
    report.show()
    print("findings:", ", ".join(f.id for f in report.findings) or "none")
    if args.save:
        report.save(args.save, overwrite=True)


if __name__ == "__main__":
    main()
