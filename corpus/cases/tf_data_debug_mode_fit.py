"""tf.data's debug mode (`tf.data.experimental.enable_debug_mode`), switched on to step
through a `map` function, left on while the model trains on the pipeline (Keras 3 `fit` on
the dataset; `profile()` on the user's `train()`, which builds the pipeline and fits one
epoch).

tfdiag reads the line that sets a switch from the user's source text (comments left out), so
the strings here name the call without its parentheses: the program's own line has them.
"""

import contextlib
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="tf-data-debug-mode-fit",
    title="training got many times slower after I debugged my input pipeline",
    source="tensorflow/tensorflow#52326 and #53436 (tf.data debug mode makes the pipeline "
    "sequential and eager); TF API docs for tf.data.experimental.enable_debug_mode "
    "('should only be used for debugging')",
    mechanism=(
        "with tf.data's debug mode on, the per-element augment map is wrapped in a "
        "tf.py_function and run eagerly, one element at a time, and num_parallel_calls and "
        "prefetch are ignored: every 16-element batch waits for 16 eager calls of the map "
        "function; without the switch the same pipeline runs as a parallel graph"
    ),
    expect="input-bound",
    fix_mentions=("enable_debug_mode",),
    premise=5,  # 5.3-7.5x measured (--rounds 3, 2026-12-04; 64 and 128 elements)
    iterations=3,
    # train() builds its pipeline per call, as in the fixed program: secondary findings.
    also=("per-iteration-tracing", "per-call-input-pipeline", "model-rebuilt-per-call"),
)

N, BATCH = 64, 16


@contextlib.contextmanager
def debug_mode_left_on():
    """The program's switch, as its script has it on; turned off after, so that it does not
    leak into the next case in this process (it is process-wide)."""
    import tensorflow as tf
    from tensorflow.python.data.ops import debug_mode

    tf.data.experimental.enable_debug_mode()
    try:
        yield
    finally:
        debug_mode.toggle_debug_mode(False)


def make_dataset(x, y):
    import tensorflow as tf

    def augment(image, label):
        image = tf.image.random_flip_left_right(image)
        image = tf.image.random_brightness(image, 0.1)
        return tf.image.per_image_standardization(image), label

    return (
        tf.data.Dataset.from_tensor_slices((x, y))
        .map(augment, num_parallel_calls=tf.data.AUTOTUNE)
        .batch(BATCH)
        .prefetch(tf.data.AUTOTUNE)
    )


def setup():
    import keras

    keras.utils.set_random_seed(6)
    rng = np.random.default_rng(6)
    x = rng.random((N, 16, 16, 3)).astype("float32")
    y = rng.integers(0, 10, (N,)).astype("int32")
    model = keras.Sequential(
        [
            keras.Input((16, 16, 3)),
            keras.layers.Conv2D(8, 3, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(10),
        ]
    )
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    s = SimpleNamespace(model=model, x=x, y=y)
    slow(s)
    fast(s)
    return s


def train(s):
    """The user's epoch: the pipeline, then one fit over it."""
    return s.model.fit(make_dataset(s.x, s.y), epochs=1, verbose=0)


def slow(s):
    with debug_mode_left_on():
        return train(s)


def fast(s):
    # The fix: the debug-mode line removed; the same pipeline, built and fitted.
    return train(s)


def diagnose(s, iterations):
    import tfdiag

    # The switch is on while tfdiag looks, as in the user's process.
    with debug_mode_left_on():
        return tfdiag.profile(train, s, iterations=iterations)
