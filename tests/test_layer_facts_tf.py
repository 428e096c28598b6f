"""The call's facts name the model's own layer classes and where their ``call`` is: an op
scope in the TF profiler (``sequential/inspect_1/StringFormat``) then names the user's code."""

from __future__ import annotations

import pytest

from tfdiag.capture.facts import call_facts

pytestmark = pytest.mark.tf


def test_a_models_own_layers_are_recorded_with_their_call_line() -> None:
    import keras

    class Inspect(keras.layers.Layer):
        def call(self, x):  # type: ignore[no-untyped-def]
            return x

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), Inspect(name="inspect")])
    facts = dict(call_facts(model.predict, (), {}))
    line = Inspect.call.__code__.co_firstlineno
    assert facts["layer.inspect"] == f"Inspect.call (test_layer_facts_tf.py:{line})"
    assert not [k for k in facts if k.startswith("layer.dense")]  # Keras' own: not recorded
