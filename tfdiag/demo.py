"""``python -m tfdiag demo``: the seed-003 case — a tiny Dense model's ``predict`` × 20.

The seeds found ``predict`` on small data dominated by per-call input processing
and graph building; on TF 2.21 the same shape of cost is still there (a tf.data
pipeline and its traced functions, built on every call). This module imports
TensorFlow, so only the CLI imports it, on demand.
"""

from __future__ import annotations

import os
from typing import Any

from tfdiag.capture.runner import profile
from tfdiag.errors import InputError
from tfdiag.report import Report

BATCH_SHAPE = (32, 4)


def keras_module(flavour: str) -> Any:
    """``keras`` (Keras 3) or ``tf_keras``, imported on demand."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if flavour == "keras3":
        import keras

        return keras
    if flavour == "tf_keras":
        try:
            import tf_keras
        except ImportError:
            raise InputError("tf_keras is not installed: pip install 'tfdiag[tf-keras]'") from None
        return tf_keras
    raise InputError(f"unknown Keras flavour {flavour!r} (keras3 or tf_keras)")


def tiny_model(flavour: str = "keras3", *, compiled: bool = True) -> Any:
    """Seed 003's tiny model: Dense 4 → 2 → 1."""
    keras = keras_module(flavour)
    ipt = keras.layers.Input(shape=(BATCH_SHAPE[1],))
    x = keras.layers.Dense(2, activation="relu")(ipt)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(ipt, out)
    if compiled:
        model.compile("adam", "binary_crossentropy")
    return model


#: The seeds' data shapes for the small model (batch, timesteps, channels).
SMALL_DATA = (32, 140, 30)
MEDIUM_DATA = (32, 1400, 30)


def conv1d_model(batch_shape: tuple[int, int, int], flavour: str = "keras3") -> Any:
    """Seed 001's small model: Conv1D(128, 40, strides=4) → pooling → Dropout → Dense 64 → 1."""
    keras = keras_module(flavour)
    layers = keras.layers
    ipt = layers.Input(batch_shape=batch_shape)
    x = layers.Conv1D(128, 40, strides=4, padding="same")(ipt)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.5)(x)
    x = layers.Dense(64, activation="relu")(x)
    out = layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(ipt, out)
    model.compile("adam", "binary_crossentropy")
    return model


def run_demo(
    flavour: str = "keras3",
    iterations: int = 20,
    *,
    sampling: bool = False,
    tf_profiler: bool = False,
) -> Report:
    import numpy as np

    model = tiny_model(flavour)
    x = np.random.default_rng(0).standard_normal(BATCH_SHAPE).astype("float32")
    return profile(
        model.predict,
        x,
        iterations=iterations,
        sampling=sampling,
        tf_profiler=tf_profiler,
        verbose=0,
    )
