"""tf_keras: a driving loop runs `predict` on every camera frame (donkeycar-style)."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="predict-per-frame-tf-keras",
    title="my pilot loop dropped from 20 fps to 5 fps after upgrading TensorFlow",
    source="autorope/donkeycar PR#861 (predict -> model call, back to ~22 fps on RPi4); "
    "tensorflow/tensorflow#40261",
    mechanism=(
        "run_pilot() calls tf_keras model.predict on each 1-frame batch: predict's per-call "
        "DataHandler and callbacks dominate a small conv-free steering model"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("predict_on_batch", "model(x, training=False)"),
    premise=12,
    iterations=5,
    also=("per-iteration-tracing",),
)

FRAMES = 3


def setup():
    import tf_keras as keras

    keras.utils.set_random_seed(3)
    inp = keras.Input((30, 40, 1))
    h = keras.layers.Flatten()(inp)
    h = keras.layers.Dense(50, activation="relu")(h)
    angle = keras.layers.Dense(1, name="angle")(h)
    throttle = keras.layers.Dense(1, name="throttle")(h)
    model = keras.Model(inp, [angle, throttle])
    rng = np.random.default_rng(3)
    frames = rng.random((FRAMES, 30, 40, 1)).astype("float32")
    model.predict(frames[:1], verbose=0)
    return SimpleNamespace(model=model, frames=frames)


def run_pilot(model, frames):
    """The user's loop: one predict per camera frame."""
    controls = []
    for img in frames:
        angle, throttle = model.predict(img[None], verbose=0)
        controls.append((float(angle[0, 0]), float(throttle[0, 0])))
    return controls


def run_pilot_fixed(model, frames):
    controls = []
    for img in frames:
        angle, throttle = model(img[None], training=False)
        controls.append((float(angle[0, 0]), float(throttle[0, 0])))
    return controls


def slow(s):
    return run_pilot(s.model, s.frames)


def fast(s):
    return run_pilot_fixed(s.model, s.frames)


def target(s):
    return run_pilot, (s.model, s.frames), {}
