"""Remedies keyed by the API at the user's line: each rule's text on the line that selects
it, and never on another (one program, one remedy; every sentence chosen by the record)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tfdiag.advise.remedies import RULES, Scene, evidence, remedy
from tfdiag.advise.remedies.base import assigned, counted_dataset, first_argument, receiver
from tfdiag.analysis.lines import UserLine
from tfdiag.records.catalog.apis import NATURES, api_of

SITE = "/venv/lib/python3.11/site-packages/"


def line(code: str, api: str, nature: str, **kw: object) -> UserLine:
    base = UserLine(
        file="/home/me/app.py",
        line=34,
        code=code,
        function="handle",
        api=api,
        nature=nature,
        catalogued=True,
        callee=1,
        api_index=1,
        calls_per_iteration=1.0,
        share=0.9,
        exact=True,
        function_line=30,
        function_calls=1.0,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


#: One line per rule and case: (line, the remedy key it must get, a phrase its text holds).
CASES = [
    (
        line(
            "lookup = keras.layers.StringLookup(vocabulary=V)",
            "keras.layers.StringLookup",
            "construct",
        ),
        "construct",
        "reuse `lookup`",
    ),
    (
        line("f = tf.function(g)", "tf.function", "construct"),
        "construct:tf.function",
        "call that object",
    ),
    (
        line("opt = keras.optimizers.Adam(lr)", "keras.optimizers.Adam", "construct"),
        "construct:optimizer",
        "optimizer.learning_rate = new_lr",
    ),
    (
        line(
            "ds = tf.data.Dataset.from_tensor_slices(x)",
            "tf.data.Dataset.from_tensor_slices",
            "construct",
        ),
        "construct:dataset",
        "iterate over that one",
    ),
    (line("v = tf.Variable(0.0)", "tf.Variable", "construct"), "construct:variable", "`assign`"),
    (
        line("m = keras.models.clone_model(model)", "keras.models.clone_model", "construct"),
        "construct:model",
        "set_weights",
    ),
    (
        line("vec.adapt(corpus)", "TextVectorization.adapt", "setup"),
        "setup:adapt",
        "Adapt `vec` once",
    ),
    (
        line("model.compile('adam', 'mse')", "model.compile", "setup"),
        "setup:compile",
        "learning_rate.assign",
    ),
    (
        line("model.load_weights(path)", "model.load_weights", "setup"),
        "setup:load-weights",
        "getmtime",
    ),
    (
        line("y = model.predict(batch, verbose=0)", "model.predict", "keras-loop"),
        "keras-loop:predict",
        "`model.predict_on_batch(batch)`",
    ),
    (
        line("model.fit(x, y, verbose=0)", "model.fit", "keras-loop"),
        "keras-loop:fit",
        "train_on_batch",
    ),
    (
        line("model.evaluate(x, y)", "model.evaluate", "keras-loop"),
        "keras-loop:evaluate",
        "test_on_batch",
    ),
    (
        line("n = sum(1 for _ in ds)", "iter(dataset)", "data-iterate"),
        "data-iterate:count",
        "`ds.cardinality()`",
    ),
    (line("x = next(iter(ds))", "iter(dataset)", "data-iterate"), "data-iterate", "it = iter(ds)"),
    (
        line("target.set_weights(w)", "model.set_weights", "weights-host"),
        "weights-host",
        "t.assign(tau * s",
    ),
    (line("loss = float(l)", "float(tensor)", "to-host"), "to-host", "every N iterations"),
    (line("t = tf.constant(big)", "tf.constant", "convert"), "convert", "once"),
    (
        line("tf.summary.histogram('w', w, step)", "tf.summary.histogram", "summary"),
        "summary",
        "step % 100",
    ),
    (line("model.save('m.keras')", "model.save", "save"), "save", "once per epoch"),
    (
        line("keras.utils.clear_session()", "keras.utils.clear_session", "clear"),
        "clear",
        "built again",
    ),
    (
        line("y = model(x)", "calling a model or layer", "model-call"),
        "eager:tf-function-model",
        "tf.function(lambda x: model(x, training=False))",
    ),
    (
        line("out = tf.reduce_sum(x)", "tf.reduce_sum", "eager-op"),
        "eager:tf-function",
        "`@tf.function`",
    ),
    (
        line("v = tf.random.uniform(())", "tf.random_uniform", "eager-op", function_calls=500.0),
        "eager:numpy-per-item",
        "NumPy",
    ),
    (
        line("if probs[i] > THRESHOLD:", "tensor[...]", "eager-op"),
        "eager:element-numpy",
        "`probs = probs.numpy()`",
    ),
]


@pytest.mark.parametrize(("at", "key", "phrase"), CASES, ids=[c[1] for c in CASES])
def test_each_rule_writes_its_remedy_for_the_line_that_selects_it(
    at: UserLine, key: str, phrase: str
) -> None:
    found = remedy(at, Scene((at,)))
    assert found is not None and found.key == key
    assert phrase in found.text
    assert "app.py:34" in found.text  # the user's line, named


#: Sentences that belong to one program only, each with the remedy keys that may hold it.
OWN_SENTENCES = {
    "tf.summary": {"summary"},
    "py_function": set(),
    "run_eagerly": {"debug-switch:run-eagerly"},
    "predict_on_batch": {"keras-loop:predict", "eager:predict-on-batch"},
    "cardinality": {"data-iterate:count"},
    "set_weights": {"construct:model"},
    "GradientTape": set(),
    "steps_per_execution": set(),
}


def test_no_remedy_carries_a_sentence_of_another_program() -> None:
    for at, _key, _ in CASES:
        found = remedy(at, Scene((at,)))
        assert found is not None
        own_words = found.text.replace(at.code, "")  # the user's own line, quoted, is theirs
        for phrase, owners in OWN_SENTENCES.items():
            if phrase in own_words:
                assert found.key in owners, (found.key, phrase)


def test_a_build_call_not_run_on_every_call_gets_no_remedy() -> None:
    once = line(
        "lookup = keras.layers.StringLookup(vocabulary=V)",
        "keras.layers.StringLookup",
        "construct",
        calls_per_iteration=0.2,
    )
    assert remedy(once) is None


def test_a_training_step_is_decorated_and_a_model_call_in_it_is_not_given_an_inference_fix() -> (
    None
):
    call = line("logits = model(x, training=True)", "calling a model or layer", "model-call")
    grad = line(
        "g = tape.gradient(loss, model.trainable_variables)", "tape.gradient", "train-op", line=36
    )
    found = remedy(call, Scene((call, grad)))
    assert found is not None and found.key == "eager:tf-function-step"
    assert "`handle` (app.py:30)" in found.text and "training=False" not in found.text
    on_jax = remedy(call, Scene((call, grad), backend="jax"))
    assert (
        on_jax is not None and on_jax.key == "eager:jit-step" and "tf.function" not in on_jax.text
    )


def test_per_item_work_feeding_a_graph_step_goes_into_that_step() -> None:
    crop = line(
        "return tf.image.random_crop(image, (32, 32, 3))",
        "tf.random_crop",
        "eager-op",
        function="augment",
        function_calls=128.0,
    )
    step = line("loss = step(x, y)", "a tf.function", "graph-call", line=50)
    found = remedy(crop, Scene((crop, step)))
    assert found is not None and found.key == "eager:into-step"
    assert "`loss = step(x, y)`" in found.text and "NumPy" not in found.text


def test_switches_are_removed_at_their_line_and_named_when_no_line_was_found() -> None:
    sw = line("model.compile('adam', 'mse', run_eagerly=True)", "run-eagerly", "debug-switch")
    found = remedy(sw)
    assert found is not None and found.key == "debug-switch:run-eagerly"
    assert found.text.startswith("Remove `run_eagerly=True` from `model.compile(")
    dyn = line("", "dynamic", "debug-switch", line=0)
    found = remedy(dyn)
    assert found is not None and "dynamic=True" in found.text and "run_eagerly" not in found.text
    debug = line("tf.data.experimental.enable_debug_mode()", "tf-data-debug", "debug-switch")
    found = remedy(debug)
    assert found is not None and "py_function" not in found.text and "debug mode" in found.text


def test_every_nature_is_known_and_the_entry_line_gets_no_remedy() -> None:
    assert set(RULES) <= set(NATURES)
    entry = line("r = tfdiag.profile(model.predict, x)", "Functional.predict", "", entry=True)
    assert remedy(entry) is None
    assert evidence(entry).endswith("makes the call profiled (`Functional.predict`)")


def test_the_users_names_are_read_off_the_line() -> None:
    assert assigned("lookup = keras.layers.StringLookup(vocabulary=V)") == "lookup"
    assert assigned("self.table = make()") == "table"
    assert assigned("if a == b:") is None
    assert receiver("y = self.model.predict(x)", "predict") == "self.model"
    assert first_argument("model.predict(batch, verbose=0)", "predict") == "batch"
    assert counted_dataset("for _ in ds:") == "ds"
    assert counted_dataset("n = len(list(val_ds))") == "val_ds"
    assert counted_dataset("for x, y in ds:") is None


def test_apis_are_named_as_the_user_writes_them() -> None:
    keras = SITE + "keras/src/"
    found = api_of(keras + "layers/preprocessing/string_lookup.py", "StringLookup.__init__")
    assert found is not None and (found.name, found.nature) == (
        "keras.layers.StringLookup",
        "construct",
    )
    found = api_of(keras + "backend/tensorflow/trainer.py", "TensorFlowTrainer.predict")
    assert found is not None and (found.name, found.nature) == ("model.predict", "keras-loop")
    found = api_of(keras + "backend/tensorflow/trainer.py", "TensorFlowTrainer.predict_on_batch")
    assert found is not None and found.nature == "keras-step"
    # no row: a constructor is still build cost, by its name
    found = api_of(SITE + "somelib/tables.py", "Table.__init__")
    assert found is not None and found.nature == "construct" and not found.catalogued
    assert api_of(SITE + "somelib/tables.py", "Table.lookup") is None


def test_a_tensor_sliced_by_a_constant_is_not_read_element_by_element() -> None:
    """`x[:, :4]` is one op on the whole tensor: no element loop to move to NumPy."""
    found = remedy(line("head = x[:, :4]", "tensor[...]", "eager-op"))
    assert found is not None and found.key != "eager:element-numpy"
