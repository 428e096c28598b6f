"""Keras 3: a user function scores a list of frames with one `predict` per frame."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="predict-per-sample-loop",
    title="scoring a handful of frames takes a quarter of a second with a tiny MLP",
    source="autorope/donkeycar PR#861; ipazc/mtcnn PR#107; tensorflow/tensorflow#40261",
    mechanism=(
        "the user's score_frames() calls model.predict(frame[None]) per frame: each call pays "
        "predict's per-call data adapter / tf.data / callbacks setup for one row"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("predict_on_batch", "model(x, training=False)"),
    premise=12,
    iterations=5,
    also=("per-iteration-tracing",),
)

FRAMES = 3


def setup():
    import keras

    keras.utils.set_random_seed(1)
    model = keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(3, activation="softmax"),
        ]
    )
    rng = np.random.default_rng(1)
    frames = rng.standard_normal((FRAMES, 64)).astype("float32")
    model.predict(frames[:1], verbose=0)
    return SimpleNamespace(model=model, frames=frames)


def score_frames(model, frames):
    """The user's code: one predict per frame, argmax of each."""
    labels = []
    for frame in frames:
        probs = model.predict(frame[None, :], verbose=0)
        labels.append(int(np.argmax(probs[0])))
    return labels


def score_frames_fixed(model, frames):
    labels = []
    for frame in frames:
        probs = model(frame[None, :], training=False)
        labels.append(int(np.argmax(probs[0])))
    return labels


def slow(s):
    return score_frames(s.model, s.frames)


def fast(s):
    return score_frames_fixed(s.model, s.frames)


def target(s):
    return score_frames, (s.model, s.frames), {}
