"""The callback hook names what a generator-fed pipeline really runs (real TensorFlow)."""

from __future__ import annotations

from typing import Any

import pytest

from tfdiag.capture.pycalls import CallbackRecorder, hooked

pytestmark = pytest.mark.tf


def _records(iterate: Any) -> Any:
    recorder = CallbackRecorder()
    with hooked(recorder) as on:
        iterate()
    assert on
    return recorder.records()


def test_a_from_generator_pipeline_is_named_by_its_generator() -> None:
    import tensorflow as tf

    def rows() -> Any:
        yield from range(5)

    ds = tf.data.Dataset.from_generator(rows, output_signature=tf.TensorSpec((), tf.int32))
    found = _records(lambda: [int(v) for v in ds])
    top = found[0]
    assert top.function.endswith("rows") and top.kind == "generator"
    assert top.file == __file__ and top.calls >= 5


def test_a_keras_pydataset_is_named_by_its_getitem_and_workers() -> None:
    import keras
    import numpy as np

    class Frames(keras.utils.PyDataset):  # type: ignore[misc]
        def __len__(self) -> int:
            return 3

        def __getitem__(self, i: int) -> Any:
            return np.zeros((4, 2), "float32"), np.zeros((4, 1), "float32")

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    found = _records(lambda: model.fit(Frames(workers=1), epochs=1, verbose=0))
    pydatasets = [c for c in found if c.kind == "pydataset"]
    assert pydatasets, found
    assert pydatasets[0].function.startswith(
        "test_a_keras_pydataset_is_named_by_its_getitem_and_workers.<locals>.Frames.__getitem__"
    )
    assert "workers=1" in pydatasets[0].function and pydatasets[0].file == __file__


@pytest.mark.parametrize(("workers", "processes"), [(1, False), (2, False)])
def test_a_tf_keras_sequence_is_named_by_its_getitem_and_workers(
    workers: int, processes: bool
) -> None:
    import numpy as np
    import tf_keras

    class Frames(tf_keras.utils.Sequence):  # type: ignore[misc]
        def __len__(self) -> int:
            return 3

        def __getitem__(self, i: int) -> Any:
            return np.zeros((4, 2), "float32"), np.zeros((4, 1), "float32")

    model = tf_keras.Sequential([tf_keras.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse")
    found = _records(
        lambda: model.fit(
            Frames(), epochs=1, verbose=0, workers=workers, use_multiprocessing=processes
        )
    )
    sequences = [c for c in found if c.kind == "pydataset"]
    assert sequences, found
    assert sequences[0].function == (
        "test_a_tf_keras_sequence_is_named_by_its_getitem_and_workers.<locals>.Frames"
        f".__getitem__ (a Sequence, workers={workers}, use_multiprocessing={processes})"
    )
    assert sequences[0].file == __file__
