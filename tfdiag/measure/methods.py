"""The execution methods :func:`tfdiag.compare` measures: a table, one row per method.

Each :class:`Method` names what the user would write, whether it infers or trains,
whether it runs eagerly, and a ``prepare(subject)`` that builds everything the
method needs once (a dataset, a ``tf.function``, a copy of the model) and returns a
:class:`Prepared` whose ``run()`` makes one call. The table is data: pass your own
``Method`` to ``compare(methods=...)`` to measure something else the same way.

Training methods never touch the user's model: each works on its own copy
(``clone_model`` + ``set_weights``), compiled from the original's
``get_compile_config()`` with a fresh optimizer. TensorFlow is imported only
inside ``prepare``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfdiag.measure.subject import Subject, to_numpy
from tfdiag.records.errors import InputError

INFERENCE, TRAINING = "inference", "training"
KINDS = (INFERENCE, TRAINING)
#: What the user calls today, per kind: the speed-ups are measured against these.
BASELINES = {INFERENCE: "predict", TRAINING: "fit"}


@dataclass(frozen=True)
class Prepared:
    """A method ready to time: ``run()`` is one call; ``result()`` runs untimed, after.

    ``result()`` gives the output (inference) or the loss on the data (training);
    ``loss_before`` is a training method's loss on its fresh copy, before any call.
    """

    run: Callable[[], object]
    result: Callable[[], Any]
    loss_before: float | None = None


# -- inference ------------------------------------------------------------------------


def _predict(s: Subject) -> Prepared:
    def run() -> Any:
        return s.model.predict(s.x, batch_size=s.batch_size, verbose=0)

    return Prepared(run, run)


def _predict_dataset(s: Subject) -> Prepared:
    ds = s.dataset(with_y=False)

    def run() -> Any:
        return s.model.predict(ds, verbose=0)

    return Prepared(run, run)


def _predict_on_batch(s: Subject) -> Prepared:
    def run() -> Any:
        return s.model.predict_on_batch(s.x)

    return Prepared(run, run)


def _direct_call(s: Subject) -> Prepared:
    def run() -> Any:
        return to_numpy(s.model(s.x))

    return Prepared(run, run)


def _tf_function(jit: bool) -> Callable[[Subject], Prepared]:
    def prepare(s: Subject) -> Prepared:
        model = s.model
        fn = s.tf.function(lambda t: model(t, training=False), jit_compile=jit)

        def run() -> Any:
            return to_numpy(fn(s.x))

        return Prepared(run, run)

    return prepare


def _uncompiled_predict(s: Subject) -> Prepared:
    copy = s.copy(compile=False)

    def run() -> Any:
        return copy.predict(s.x, batch_size=s.batch_size, verbose=0)

    return Prepared(run, run)


# -- training -------------------------------------------------------------------------


def _trainer(
    eager: bool, make_run: Callable[[Subject, Any], Callable[[], object]]
) -> Callable[[Subject], Prepared]:
    """A training method on its own compiled copy; the loss is taken before and after."""

    def prepare(s: Subject) -> Prepared:
        model = s.copy(compile=True, run_eagerly=eager)
        before = s.loss(model)
        return Prepared(make_run(s, model), lambda: s.loss(model), loss_before=before)

    return prepare


def _fit(s: Subject, model: Any) -> Callable[[], object]:
    return lambda: model.fit(s.x, s.y, batch_size=s.batch_size, epochs=1, verbose=0)


def _fit_dataset(s: Subject, model: Any) -> Callable[[], object]:
    ds = s.dataset(with_y=True).repeat()
    steps = s.steps
    return lambda: model.fit(ds, epochs=1, steps_per_epoch=steps, shuffle=False, verbose=0)


def _train_on_batch(s: Subject, model: Any) -> Callable[[], object]:
    batches = s.batches()

    def run() -> None:
        for xb, yb in batches:
            model.train_on_batch(xb, yb)

    return run


def _gradient_step(graph: bool) -> Callable[[Subject, Any], Callable[[], object]]:
    def make_run(s: Subject, model: Any) -> Callable[[], object]:
        tf, opt = s.tf, model.optimizer
        variables = model.trainable_variables
        if not getattr(opt, "built", False):
            opt.build(variables)

        def step(xb: Any, yb: Any) -> Any:
            with tf.GradientTape() as tape:
                pred = model(xb, training=True)
                loss = model.compute_loss(x=xb, y=yb, y_pred=pred)
            grads = tape.gradient(loss, variables)
            opt.apply_gradients(zip(grads, variables))
            return loss

        fn = tf.function(step) if graph else step
        batches = s.batches()
        convert = tf.convert_to_tensor

        def run() -> Any:
            loss = None
            for xb, yb in batches:  # converted per call, as train_on_batch does
                loss = fn(tf.nest.map_structure(convert, xb), tf.nest.map_structure(convert, yb))
            return to_numpy(loss)  # waits for a GPU to finish, as train_on_batch does

        return run

    return make_run


@dataclass(frozen=True)
class Method:
    """One way to run the model. ``call`` is how the user writes it."""

    name: str
    call: str
    kind: str
    eager: bool
    prepare: Callable[[Subject], Prepared]
    about: str = ""


_EAGER = " with compile(run_eagerly=True)"

METHODS: tuple[Method, ...] = (
    Method(
        "predict",
        "model.predict(x)",
        INFERENCE,
        False,
        _predict,
        "the usual call; Keras builds a tf.data pipeline for x on every call",
    ),
    Method(
        "predict(tf.data)",
        "model.predict(ds)",
        INFERENCE,
        False,
        _predict_dataset,
        "ds = tf.data.Dataset.from_tensor_slices(x).batch(batch_size), built once",
    ),
    Method(
        "predict_on_batch",
        "model.predict_on_batch(x)",
        INFERENCE,
        False,
        _predict_on_batch,
        "all of x as one batch",
    ),
    Method("model(x)", "model(x)", INFERENCE, True, _direct_call, "an eager call"),
    Method(
        "tf.function",
        "tf.function(lambda x: model(x, training=False))(x)",
        INFERENCE,
        False,
        _tf_function(jit=False),
        "a graph traced once, then reused",
    ),
    Method(
        "tf.function(jit)",
        "tf.function(lambda x: model(x, training=False), jit_compile=True)(x)",
        INFERENCE,
        False,
        _tf_function(jit=True),
        "the same graph compiled by XLA; fails where XLA cannot compile an op",
    ),
    Method(
        "uncompiled predict",
        "uncompiled_copy.predict(x)",
        INFERENCE,
        False,
        _uncompiled_predict,
        "seed 003's workaround: clone_model + set_weights, no compile()",
    ),
    Method("fit", "model.fit(x, y, epochs=1)", TRAINING, False, _trainer(False, _fit)),
    Method("fit eager", "model.fit(x, y, epochs=1)" + _EAGER, TRAINING, True, _trainer(True, _fit)),
    Method(
        "fit(tf.data)",
        "model.fit(ds, epochs=1, steps_per_epoch=steps)",
        TRAINING,
        False,
        _trainer(False, _fit_dataset),
        "ds = Dataset.from_tensor_slices((x, y)).batch(batch_size).repeat(), built once",
    ),
    Method(
        "fit(tf.data) eager",
        "model.fit(ds, epochs=1, steps_per_epoch=steps)" + _EAGER,
        TRAINING,
        True,
        _trainer(True, _fit_dataset),
    ),
    Method(
        "train_on_batch",
        "model.train_on_batch(xb, yb)",
        TRAINING,
        False,
        _trainer(False, _train_on_batch),
        "one call per batch of x",
    ),
    Method(
        "train_on_batch eager",
        "model.train_on_batch(xb, yb)" + _EAGER,
        TRAINING,
        True,
        _trainer(True, _train_on_batch),
    ),
    Method(
        "tf.function step",
        "tf.function(train_step)(xb, yb)",
        TRAINING,
        False,
        _trainer(False, _gradient_step(graph=True)),
        "a custom GradientTape step: model.compute_loss + optimizer.apply_gradients",
    ),
    Method(
        "eager step",
        "train_step(xb, yb)",
        TRAINING,
        True,
        _trainer(False, _gradient_step(graph=False)),
        "the same GradientTape step without tf.function",
    ),
)


def method_named(name: str) -> Method:
    for method in METHODS:
        if method.name == name:
            return method
    known = ", ".join(m.name for m in METHODS)
    raise InputError(f"unknown method {name!r}; known: {known}")
