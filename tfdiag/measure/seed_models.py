"""The seeds' models and data: seed 003's tiny Dense model, and seed 001's benchmark grid of
small/medium/large Conv1D + Dense models on batch 32 × 30 data.

Transcribed from the seed answers' code ("make_model_small/medium/large",
"make_data"), with two deliberate changes: the data is float32 (the seeds'
``np.random.randn`` gave float64, which Keras converts on every call) and
``Adam(learning_rate=...)`` replaces the removed ``lr=`` argument. Keras is imported
only when a model is built.
"""

from __future__ import annotations

import os
from typing import Any

from tfdiag.records.bench import BATCH, CHANNELS, LENGTHS, SEED_ITERATIONS, SIZES
from tfdiag.records.errors import InputError

__all__ = [
    "BATCH",
    "BATCH_SHAPE",
    "CHANNELS",
    "LENGTHS",
    "SEED_ITERATIONS",
    "SIZES",
    "batch_shape",
    "build_model",
    "fits",
    "keras_module",
    "make_data",
    "tiny_model",
]

#: Seed 003's batch: 32 samples × 4 features.
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
            raise InputError("tf_keras is not installed: pip install tf-keras") from None
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


def batch_shape(data: str) -> tuple[int, int, int]:
    if data not in LENGTHS:
        raise InputError(f"unknown data size {data!r} (small, medium or large)")
    return (BATCH, LENGTHS[data], CHANNELS)


def fits(model: str, data: str) -> bool:
    """The large model's first 400-wide 'valid' convolution needs more than 140 steps."""
    return not (model == "large" and data == "small")


def make_data(shape: tuple[int, ...], seed: int = 0) -> tuple[Any, Any]:
    """``x`` standard normal, ``y`` random 0/1 targets; float32."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype("float32")
    y = rng.integers(0, 2, (shape[0], 1)).astype("float32")
    return x, y


def build_model(
    size: str, shape: tuple[int, ...], flavour: str = "keras3", *, run_eagerly: bool = False
) -> Any:
    """The seeds' ``make_model_<size>(batch_shape)``, compiled with Adam(1e-4) and BCE."""
    keras = keras_module(flavour)
    layers = keras.layers
    if size not in LENGTHS:
        raise InputError(f"unknown model size {size!r} (small, medium or large)")
    ipt = layers.Input(batch_shape=shape)
    if size == "small":
        x = layers.Conv1D(128, 40, strides=4, padding="same")(ipt)
        x = layers.GlobalAveragePooling1D()(x)
        x = layers.Dropout(0.5)(x)
        x = layers.Dense(64, activation="relu")(x)
    elif size == "medium":
        x = ipt
        for filters in (64, 128, 256, 256, 128, 64):
            x = layers.Conv1D(filters, 20, strides=1, padding="valid")(x)
        x = layers.GlobalAveragePooling1D()(x)
        x = layers.Dense(256, activation="relu")(x)
        x = layers.Dropout(0.5)(x)
        x = layers.Dense(128, activation="relu")(x)
        x = layers.Dense(64, activation="relu")(x)
    else:
        x = layers.Conv1D(64, 400, strides=4, padding="valid")(ipt)
        x = layers.Conv1D(128, 200, strides=1, padding="valid")(x)
        for _ in range(40):
            x = layers.Conv1D(256, 12, strides=1, padding="same")(x)
        x = layers.Conv1D(512, 20, strides=2, padding="valid")(x)
        x = layers.Conv1D(1028, 10, strides=2, padding="valid")(x)
        x = layers.Conv1D(256, 1, strides=1, padding="valid")(x)
        x = layers.GlobalAveragePooling1D()(x)
        x = layers.Dense(256, activation="relu")(x)
        x = layers.Dropout(0.5)(x)
        x = layers.Dense(128, activation="relu")(x)
        x = layers.Dense(64, activation="relu")(x)
    out = layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(ipt, out)
    model.compile(
        keras.optimizers.Adam(learning_rate=1e-4), "binary_crossentropy", run_eagerly=run_eagerly
    )
    return model
