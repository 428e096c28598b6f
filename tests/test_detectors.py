"""Every detector of the findings table on synthetic records, TF-free: one run where it must
fire and lead (impact, evidence, the fix it picks), one near-miss where it must not (just under
a threshold, or a mechanism it must not be confused with), and the ranking rules.

The records are built with :mod:`synth`: a call tree for the profile (``cold=[]``: every
profiled call is steady state, so a node's share is its seconds over the tree's), plus the
call's facts, graph traces, Python callbacks and TF profiler record where a detector reads them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from synth import SITE, Node, make_report, tensor, tf_record, trace

from tfdiag.advise import SEVERITIES, Detection, FindingSpec, advise
from tfdiag.advise.tracing import retrace_cause
from tfdiag.analysis.pipeline import analyze
from tfdiag.records.callbacks import PyCallback
from tfdiag.records.catalog import Category
from tfdiag.records.lines import LinePlace, LinesRecord
from tfdiag.records.probes import InputStage, OpRow, PyFuncs, TfProfile
from tfdiag.records.traces import TraceEvent
from tfdiag.results.report import Report

N = 5  # steady iterations of every synthetic run
TF = SITE + "tensorflow/python/"
KERAS = SITE + "keras/src/"
TF_KERAS = SITE + "tf_keras/src/"
TRAINER = KERAS + "backend/tensorflow/trainer.py"
ADAPTERS = KERAS + "trainers/data_adapters/"
CALLBACK_LIST = KERAS + "callbacks/callback_list.py"
TRACER = TF + "eager/polymorphic_function/tracing_compilation.py"
CALL_FLAT = TF + "eager/polymorphic_function/concrete_function.py"
ITERATOR = TF + "data/ops/iterator_ops.py"
EXECUTE = "<built-in method tensorflow.python._pywrap_tfe.TFE_Py_Execute>"
FAST_PATH = "<built-in method tensorflow.python._pywrap_tfe.TFE_Py_FastPathExecute>"
USER = "/home/me/train.py"
STEP_FUNCTION = "TensorFlowTrainer._make_function.<locals>.function"


def _found(report: Report) -> dict[str, Any]:
    return {f.id: f for f in report.findings}


def _ids(report: Report) -> list[str]:
    return [f.id for f in report.findings]


def _lead(report: Report, finding_id: str) -> Any:
    """The report's first finding, checked to be ``finding_id``."""
    assert _ids(report)[:1] == [finding_id], _ids(report)
    return report.findings[0]


def _graph(seconds: float, calls: int = N) -> Node:
    """A traced graph function running: the model's work, in ``calls`` graph calls."""
    return Node(CALL_FLAT, "ConcreteFunction._call_flat", seconds, calls)


# -- per-call-input-pipeline -----------------------------------------------------------------


def _predict_building_a_pipeline(share: float, tf_profile: TfProfile | None = None) -> Report:
    """``model.predict`` whose data adapter, built on every call, is ``share`` of the time."""
    adapter = Node(
        ADAPTERS + "array_data_adapter.py", "ArrayDataAdapter.get_tf_dataset", share * N, N
    )
    root = Node(TRAINER, "TensorFlowTrainer.predict", 0.0, N, [adapter, _graph((1 - share) * N)])
    return make_report([root], N, cold=[], method="predict", tf_profile=tf_profile)


def test_per_call_input_pipeline_leads_with_the_builder_and_the_predict_fix() -> None:
    lead = _lead(_predict_building_a_pipeline(0.4), "per-call-input-pipeline")
    assert lead.impact == pytest.approx(0.4, abs=0.01)
    assert lead.evidence[0] == (
        "`array_data_adapter.py:ArrayDataAdapter.get_tf_dataset` runs 1× per iteration: "
        "40 % of steady-state time (cumulative)"
    )
    assert lead.evidence[1] == (
        "input pipeline self time: 40 % of steady-state time (non-overlapping)"
    )
    assert "model.predict_on_batch(x)" in lead.fix and "model(x, training=False)" in lead.fix


def _fit_building_a_pipeline(steps: int) -> Report:
    """``model.fit`` of ``steps`` batches per call whose data adapter is built per call."""
    adapter = Node(
        ADAPTERS + "array_data_adapter.py", "ArrayDataAdapter.get_tf_dataset", 0.3 * N, N
    )
    hooks = Node(
        SITE + "keras/src/callbacks/callback_list.py",
        "CallbackList.on_train_batch_begin",
        0.0,
        steps * N,
    )
    root = Node(TRAINER, "TensorFlowTrainer.fit", 0.0, N, [adapter, hooks, _graph(0.7 * N)])
    return make_report([root], N, cold=[], method="fit")


def test_one_long_fit_made_once_pays_its_pipeline_once_no_finding() -> None:
    """Set F's e14: a 64-batch ``fit`` (profiled as the user calls it, once) was told to
    "call `model.train_on_batch(x, y)` instead of `fit`"."""
    short = _ids(_fit_building_a_pipeline(1))
    assert "per-call-input-pipeline" in short, short
    long = _ids(_fit_building_a_pipeline(64))
    assert "per-call-input-pipeline" not in long, long


def test_per_call_input_pipeline_on_batch_fix_names_the_method() -> None:
    builder = Node(TF_KERAS + "engine/data_adapter.py", "single_batch_iterator", 0.3 * N, N)
    root = Node(
        TF_KERAS + "engine/training.py", "Model.train_on_batch", 0, N, [builder, _graph(0.7 * N)]
    )
    lead = _lead(
        make_report([root], N, cold=[], method="train_on_batch"), "per-call-input-pipeline"
    )
    assert lead.impact == pytest.approx(0.3, abs=0.01)
    assert lead.fix.startswith("`train_on_batch` still wraps each batch in a data handler")


def test_per_call_input_pipeline_just_under_its_share_is_not_reported() -> None:
    assert "per-call-input-pipeline" not in _ids(_predict_building_a_pipeline(0.09))


def test_one_iterator_per_pass_over_a_dataset_built_once_is_not_a_per_call_pipeline() -> None:
    # for x in ds: ... — the user's function iterates a dataset it did not build: one
    # OwnedIterator per call is what reading it takes.
    root = Node(
        USER,
        "one_epoch",
        0.0,
        N,
        [
            Node(ITERATOR, "OwnedIterator.__init__", 0.2 * N, N),
            Node(ITERATOR, "OwnedIterator.__next__", 0.05 * N, 8 * N),
            _graph(0.75 * N, 8 * N),
        ],
    )
    report = make_report([root], N, cold=[], method="one_epoch", target="train.one_epoch")
    assert "per-call-input-pipeline" not in _ids(report)


# -- per-epoch-overhead ----------------------------------------------------------------------


def _fit_of_short_epochs(
    epochs: int, steps: int, step_share: float, validation_steps: int = 0
) -> Report:
    """One ``fit`` per iteration of ``epochs`` epochs of ``steps`` steps each; the step
    function is ``step_share`` of the time, starting the epochs (a new tf.data iterator
    each, the fit's own Python) the rest; ``validation_steps`` test steps after each epoch."""
    e, s = N * epochs, N * epochs * steps
    children = [
        Node(TRAINER, STEP_FUNCTION, step_share * N, s),
        Node(CALLBACK_LIST, "CallbackList.on_epoch_begin", 1e-5 * e, e),
        Node(CALLBACK_LIST, "CallbackList.on_train_batch_begin", 1e-5 * s, s),
        Node(ITERATOR, "OwnedIterator.__init__", 0.2 * (1 - step_share) * N, e),
    ]
    if validation_steps:
        v = e * validation_steps
        children.append(Node(CALLBACK_LIST, "CallbackList.on_test_batch_begin", 1e-5 * v, v))
    fit = Node(TRAINER, "TensorFlowTrainer.fit", 0.8 * (1 - step_share) * N, N, children)
    return make_report([fit], N, cold=[], method="fit")


def test_per_epoch_overhead_leads_a_fit_of_many_tiny_epochs() -> None:
    report = _fit_of_short_epochs(epochs=10, steps=2, step_share=0.2)
    lead = _lead(report, "per-epoch-overhead")
    assert lead.impact == pytest.approx(0.8, abs=0.01)
    assert lead.evidence[0].startswith("`fit` runs 10 epochs of 2 step(s) each per call")
    assert lead.evidence[0].endswith("of which the steps themselves are 20 %")
    assert lead.evidence[1] == "a tf.data iterator is created 1× per epoch (10× per iteration)"
    assert lead.fix.startswith("Each `fit` runs 10 epochs of 2 step(s)")
    assert "steps_per_epoch" in lead.fix
    # An iterator per epoch is the epochs' cost, not a pipeline built per call.
    assert "per-call-input-pipeline" not in _ids(report)


def test_validation_after_every_short_epoch_is_per_epoch_overhead_with_validation_freq() -> None:
    # Validation makes more (test) steps per epoch than training: still fit's epochs.
    report = _fit_of_short_epochs(epochs=10, steps=2, step_share=0.2, validation_steps=4)
    lead = _lead(report, "per-epoch-overhead")
    assert lead.evidence[0].startswith("`fit` runs 10 epochs of 2 step(s) each per call")
    assert lead.evidence[-1].startswith("validation runs after every epoch: 4 validation step(s)")
    assert "validation_freq=N" in lead.fix
    assert "per-step-overhead" not in _ids(report)


@pytest.mark.parametrize(
    ("epochs", "steps", "step_share"),
    [(10, 5, 0.2), (3, 2, 0.2), (10, 2, 0.71)],
    ids=["5-steps-per-epoch", "3-epochs", "steps-are-71%"],
)
def test_per_epoch_overhead_near_misses(epochs: int, steps: int, step_share: float) -> None:
    ids = _ids(_fit_of_short_epochs(epochs, steps, step_share))
    assert "per-epoch-overhead" not in ids


# -- per-step-overhead -----------------------------------------------------------------------


def _tiny_steps(
    *,
    kind: str = "train",
    method: str = "fit",
    steps: int = 64,
    work: float = 0.2,
    step_s: float = 0.001,
    kwargs: tuple[tuple[str, str], ...] = (),
    facts: tuple[tuple[str, str], ...] = (),
    tf_profile: TfProfile | None = None,
) -> Report:
    """One Keras call of ``steps`` steps of ``step_s`` each, of which ``work`` is the ops
    (``TFE_Py_Execute``) and the rest the step's fixed Python cost."""
    s = N * steps
    total = step_s * s
    graph = _graph(0.0, s)
    graph.children = [Node("~", EXECUTE, work * total, s)]
    step = Node(TRAINER, STEP_FUNCTION, 0.5 * (1 - work) * total, s, [graph])
    hooks = [Node(CALLBACK_LIST, f"CallbackList.on_{kind}_batch_begin", 0.01 * total, s)]
    if kind == "train":
        hooks.append(Node(CALLBACK_LIST, "CallbackList.on_epoch_begin", 1e-6, N))
    rest = (0.5 * (1 - work) - 0.01) * total
    root = Node(TRAINER, f"TensorFlowTrainer.{method}", rest, N, [step, *hooks])
    return make_report(
        [root], N, cold=[], method=method, kwargs=kwargs, facts=facts, tf_profile=tf_profile
    )


def test_per_step_overhead_in_fit_names_steps_per_execution_and_the_batch_size() -> None:
    lead = _lead(_tiny_steps(kwargs=(("batch_size", "2"),)), "per-step-overhead")
    assert lead.impact == pytest.approx(0.79, abs=0.005)  # less the hooks' 1 %: callbacks
    assert lead.evidence == (
        "64 Keras steps per epoch, 1.0 ms each; the model's own work is 20 % of that "
        "(TFE_Py_Execute's time), the rest is per-step overhead",
        "batch size 2",
    )
    assert "steps_per_execution=32" in lead.fix and "(2 now)" in lead.fix


def _one_batch_per_iteration(steps: str | None, step_s: float = 0.001) -> Report:
    """ProfileCallback's record of a fit: each iteration one batch (one step function call,
    ``work`` 20 % of it the ops), ``steps`` per epoch from Keras' params."""
    graph = _graph(0.0, N)
    graph.children = [Node("~", EXECUTE, 0.2 * step_s * N, N)]
    step = Node(TRAINER, STEP_FUNCTION, 0.8 * step_s * N, N, [graph])
    kwargs = [("batch_size", "1"), ("batches", "2–12")]
    kwargs += [("steps", steps)] if steps is not None else []
    return make_report([step], N, cold=[], method="fit", kwargs=tuple(kwargs))


def test_per_step_overhead_of_a_fit_recorded_batch_by_batch_counts_the_epochs_steps() -> None:
    """A callback's record has one step per iteration: the fit's steps per epoch (its params)
    are the count, so batch_size=1 under ProfileCallback or `tfdiag run` is named."""
    lead = _lead(_one_batch_per_iteration("2000"), "per-step-overhead")
    assert lead.evidence[0].startswith("2000 Keras steps per epoch, 1.0 ms each")
    assert "(1 now)" in lead.fix and "steps_per_execution=32" in lead.fix
    assert "per-step-overhead" not in _ids(_one_batch_per_iteration(None))  # no count known
    assert "per-step-overhead" not in _ids(_one_batch_per_iteration("8"))  # a short epoch
    plain = _one_batch_per_iteration("2000")
    facts = (("steps_per_execution", "32"),)
    shared = dataclasses.replace(plain, call=dataclasses.replace(plain.call, facts=facts))
    assert "per-step-overhead" not in _ids(shared)  # 32 steps per graph call already
    # not tiny steps: 50 ms each
    assert "per-step-overhead" not in _ids(_one_batch_per_iteration("2000", step_s=0.05))


def test_a_heavy_callback_is_its_own_cause_not_a_steps_fixed_cost() -> None:
    """A user's callback taking 60 % of each tiny batch: callback-overhead, with its own fix;
    the step's fixed cost left (20 %) is no per-step-overhead (the corpus' heavy-user-callback
    led with per-step-overhead when the callback's time counted as the step's)."""
    step_s = 0.001
    graph = _graph(0.0, N)
    graph.children = [Node("~", EXECUTE, 0.2 * step_s * N, N)]
    step = Node(TRAINER, STEP_FUNCTION, 0.2 * step_s * N, N, [graph])
    slow = Node(USER, "Slow.on_train_batch_end", 0.6 * step_s * N, N)
    hook = Node(CALLBACK_LIST, "CallbackList.on_train_batch_end", 1e-6 * N, N, [slow])
    kwargs = (("batch_size", "1"), ("batches", "2–12"), ("steps", "2000"))
    report = make_report([step, hook], N, cold=[], method="fit", kwargs=kwargs)
    assert _ids(report)[0] == "callback-overhead"
    assert "per-step-overhead" not in _ids(report)


def test_per_step_overhead_in_predict_names_a_larger_batch_size() -> None:
    lead = _lead(_tiny_steps(kind="predict", method="predict"), "per-step-overhead")
    assert lead.fix.startswith("Each of the 64 steps per call runs a tiny batch")
    assert "`batch_size` to `predict`" in lead.fix and "batch_size=1024" in lead.fix
    assert "steps_per_execution=32" not in lead.fix


@pytest.mark.parametrize(
    ("kind", "method", "fix"),
    [
        ("predict", "predict", "`predict` ignores `batch_size` for a dataset"),
        ("test", "evaluate", "`evaluate` ignores `batch_size` for a dataset"),
        ("train", "fit", "`fit` ignores `batch_size` for a dataset"),
    ],
)
def test_per_step_overhead_on_a_dataset_says_to_batch_the_dataset(
    kind: str, method: str, fix: str
) -> None:
    facts = (("x.kind", "tf.data.Dataset"), ("x.class", "_BatchDataset"))
    lead = _lead(_tiny_steps(kind=kind, method=method, facts=facts), "per-step-overhead")
    assert lead.evidence[-1] == (
        "the input is a `tf.data.Dataset` (`_BatchDataset`): its batches are the dataset's own"
    )
    assert fix in lead.fix and "ds.unbatch().batch(" in lead.fix
    assert "{" not in lead.fix


def test_per_step_overhead_in_a_custom_loop_counts_graph_calls() -> None:
    s = N * 64
    graph = _graph(0.0, s)
    graph.children = [Node("~", EXECUTE, 0.1 * s * 1e-3, s)]
    root = Node(USER, "train_epoch", 0.9 * s * 1e-3, N, [graph])
    report = make_report([root], N, cold=[], method="train_epoch", target="train.train_epoch")
    lead = _lead(report, "per-step-overhead")
    assert lead.impact == pytest.approx(0.9, abs=0.01)
    assert lead.evidence[0].startswith("64 graph function calls per call, 1.0 ms each")
    assert lead.fix.startswith("Your `tf.function` step is called 64× per call on tiny batches")


@pytest.mark.parametrize(
    "case",
    [
        {"steps": 15},
        {"work": 0.55},
        {"step_s": 0.011},
        # The TF profiler says the ops are 60 % of the step: not overhead, though
        # TFE_Py_Execute's own time is 20 %.
        {"tf_profile": tf_record(wall_s=64e-3, op_s=0.6 * 64e-3)},
    ],
    ids=["15-steps", "work-55%", "11-ms-steps", "tf-profiler-work-60%"],
)
def test_per_step_overhead_near_misses(case: dict[str, Any]) -> None:
    assert "per-step-overhead" not in _ids(_tiny_steps(**case))


def test_an_on_batch_call_per_step_is_not_per_step_overhead() -> None:
    s = N * 64
    pob = Node(TRAINER, "TensorFlowTrainer.train_on_batch", 0.8e-3 * s, s, [_graph(0.2e-3 * s, s)])
    root = Node(USER, "train_epoch", 0.0, N, [pob])
    report = make_report([root], N, cold=[], method="train_epoch", target="train.train_epoch")
    assert "per-step-overhead" not in _ids(report)


# -- model-rebuilt-per-call ------------------------------------------------------------------


def _model_built_per_call(share: float, calls: int = N) -> Report:
    """The user's function builds a Sequential model (``calls`` times in N iterations), then
    runs it with ``predict_on_batch``."""
    build = Node(KERAS + "models/sequential.py", "Sequential.__init__", share * N, calls)
    run = Node(TRAINER, "TensorFlowTrainer.predict_on_batch", 0, N, [_graph((1 - share) * N)])
    root = Node("/home/me/serve.py", "answer", 0.0, N, [build, run])
    return make_report([root], N, cold=[], method="answer", target="serve.answer")


def test_a_model_built_every_call_leads_with_the_build_once_fix() -> None:
    lead = _lead(_model_built_per_call(0.3), "model-rebuilt-per-call")
    assert lead.impact == pytest.approx(0.3, abs=0.01)
    assert lead.evidence == (
        "`sequential.py:Sequential.__init__` runs 1× per iteration: 30 % of steady-state time "
        "(cumulative)",
    )
    assert lead.fix.startswith("A model is built, loaded or compiled on every call")
    assert "set_weights" in lead.fix


def test_compile_every_call_counts_the_retracing_it_causes() -> None:
    # compile() itself is 1 % of the time; the train_on_batch after it traces Keras's step
    # again (60 %), outside compile.
    compile_ = Node(KERAS + "trainers/trainer.py", "Trainer.compile", 0.01 * N, N)
    tracer = Node(TRACER, "_create_concrete_function", 0.6 * N, N)
    step = Node(TRAINER, "TensorFlowTrainer.train_on_batch", 0.0, N, [tracer, _graph(0.39 * N)])
    root = Node("/home/me/train.py", "step", 0.0, N, [compile_, step])
    report = make_report([root], N, cold=[], method="step", target="train.step")
    lead = _lead(report, "model-rebuilt-per-call")
    assert lead.impact == pytest.approx(0.6, abs=0.02)
    assert "its step functions are traced again after it: tracing is 60 %" in lead.evidence[0]
    # compile() per call is how a learning rate gets changed: the fix says how without it.
    assert lead.fix.startswith("`compile()` runs on every call")
    assert "model.optimizer.learning_rate.assign(new_lr)" in lead.fix
    # one remedy: no list of every other way to schedule a learning rate
    assert "LearningRateScheduler" not in lead.fix
    # The traces compile() causes are part of it, and say so.
    assert _ids(report)[:2] == ["model-rebuilt-per-call", "per-iteration-tracing"]
    assert report.findings[1].fix.startswith("The traces are Keras' step functions, dropped by")
    assert report.findings[1].evidence[-1].startswith("`compile()` runs 1× per iteration")


@pytest.mark.parametrize(
    ("new", "recompiled", "lead_fix", "tracing_fix"),
    [
        (0, 11, "`compile()` runs on every call", "The traces are Keras' step functions"),
        (11, 0, "A model is built, loaded or compiled on every call", "The traces are the step"),
        (1, 0, None, None),
    ],
    ids=["recompiled", "new-model", "one-new-model"],
)
def test_a_model_rebuilt_between_run_calls_is_model_rebuilt_per_call(
    new: int, recompiled: int, lead_fix: str | None, tracing_fix: str | None
) -> None:
    # `tfdiag run` saw the site's model re-compiled (or new) at the entry of its later
    # calls: compile()/clone_model ran between them, outside the site; each call traces.
    tracer = Node(TRACER, "_create_concrete_function", 0.6 * N, N)
    root = Node(TRAINER, "TensorFlowTrainer.fit", 0.0, N, [tracer, _graph(0.4 * N)])
    facts = (
        ("calls.later", "11"),
        ("calls.new_model", str(new)),
        ("calls.recompiled", str(recompiled)),
    )
    report = make_report([root], N, cold=[], method="fit", facts=facts)
    if lead_fix is None:  # 1 of 11: not rebuilt per call
        assert "model-rebuilt-per-call" not in _ids(report)
        return
    lead = _lead(report, "model-rebuilt-per-call")
    assert lead.impact == pytest.approx(0.6, abs=0.02)
    what = "a different model object" if new else "the same model, re-compiled"
    assert lead.evidence[0].startswith(f"11 of this site's 11 later calls were on {what}")
    assert lead.fix.startswith(lead_fix)
    assert ("learning_rate.assign" in lead.fix) == bool(recompiled)
    assert ("set_weights" in lead.fix) == bool(new)
    assert _ids(report)[:2] == ["model-rebuilt-per-call", "per-iteration-tracing"]
    assert tracing_fix is not None and report.findings[1].fix.startswith(tracing_fix)


@pytest.mark.parametrize(
    ("share", "calls"), [(0.09, N), (0.3, 2)], ids=["share-9%", "built-twice-in-5-calls"]
)
def test_model_rebuilt_near_misses(share: float, calls: int) -> None:
    assert "model-rebuilt-per-call" not in _ids(_model_built_per_call(share, calls))


X = ("x", tensor(8, 4))


def _retraced(
    traces: tuple[TraceEvent, ...], *, share: float = 0.4, tracer_calls: int = N
) -> Report:
    """The user's loop calls a ``tf.function`` that traces (``tracer_calls`` times in N
    iterations, ``share`` of the time), with the given recorded traces."""
    tracer = Node(TRACER, "_create_concrete_function", share * N, tracer_calls)
    function = Node(
        TF + "eager/polymorphic_function/polymorphic_function.py",
        "Function.__call__",
        0.0,
        N,
        [tracer, _graph((1 - share) * N)],
    )
    root = Node(USER, "run", 0.0, N, [function])
    return make_report([root], N, cold=[], method="run", target="train.run", traces=traces)


def _each_call(params: Any, **kw: Any) -> tuple[TraceEvent, ...]:
    """One trace in the cold call and in each steady call; ``params(c)`` gives call c's."""
    return tuple(trace(c, params(c), **kw) for c in range(N + 1))


def test_a_new_tf_function_every_call_is_model_rebuilt_and_tracing_says_why() -> None:
    # The same argument types every call, each a new tf.function object: traced anyway.
    report = _retraced(tuple(trace(c, (X,), function_id=100 + c) for c in range(N + 1)))
    found = _found(report)
    lead = _lead(report, "model-rebuilt-per-call")
    assert lead.impact == pytest.approx(0.4, abs=0.01)
    assert lead.evidence == (
        "`step` is traced again, with the same argument types, in 5 of 5 steady calls: a new "
        "`tf.function` object each time; tracing is 40 % of steady-state time",
    )
    assert lead.fix.startswith("A new `tf.function` is made on every call")
    tracing = found["per-iteration-tracing"]
    assert tracing.evidence[-1] == (
        "`step` (train.py:10) was traced 5× in the steady calls with the same argument types: "
        "a new `tf.function` object is made for every call"
    )
    assert tracing.fix.startswith("The `tf.function` is made anew on every call")


def test_a_new_optimizer_every_call_says_how_to_change_the_learning_rate() -> None:
    # A custom loop makes Adam(lr) and a tf.function step per epoch to change the rate.
    optimizer = Node(KERAS + "optimizers/base_optimizer.py", "BaseOptimizer.__init__", 0.01, N)
    tracer = Node(TRACER, "_create_concrete_function", 0.4 * N, N)
    function = Node(
        TF + "eager/polymorphic_function/polymorphic_function.py",
        "Function.__call__",
        0.0,
        N,
        [tracer, _graph(0.6 * N)],
    )
    loop = Node(USER, "run", 0.0, N, [optimizer, function])
    traces = tuple(trace(c, (X,), function_id=100 + c) for c in range(N + 1))
    report = make_report([loop], N, cold=[], method="run", target="train.run", traces=traces)
    lead = _lead(report, "model-rebuilt-per-call")
    assert lead.evidence[0].endswith(
        "an optimizer is constructed 1× per iteration "
        "(`base_optimizer.py:BaseOptimizer.__init__`), and the step is made again for it"
    )
    assert lead.fix.startswith("A new optimizer is made on every call")
    assert "`optimizer.learning_rate = new_lr`" in lead.fix
    assert "LearningRateSchedule" not in lead.fix


def test_a_function_retraced_for_new_values_is_not_rebuilt() -> None:
    report = _retraced(_each_call(lambda c: (X, ("i", f"Literal[{c}]"))))
    assert "model-rebuilt-per-call" not in _ids(report)


# -- per-iteration-tracing -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "evidence", "fix"),
    [
        (
            lambda c: (X, ("i", f"Literal[{c}]")),
            "argument `i` is a Python value that changes: 1, 2, 3, 4, … — each new value is "
            "traced into a new graph",
            "Pass the changing value as a tensor (`tf.constant(i)`)",
        ),
        (
            lambda c: (X, ("x2", tensor(32, 3 + c))),
            "argument `x2` changes shape in dimension 1: 4, 5, 6, 7, … — each new shape is "
            "traced into a new graph",
            "Give the `tf.function` `reduce_retracing=True`",
        ),
        (
            lambda c: (("xs", "List[" + ", ".join(["Literal[1.0]"] * (c + 1)) + "]"),),
            "argument `xs` is a Python list/dict whose contents change (5 different ones): each "
            "is traced into a new graph",
            "Pass a tensor (`tf.constant(values)`) or a fixed-length tuple",
        ),
        (
            lambda c: (("x", tensor(8, 4, dtype=("float32", "int32", "float64")[c % 3])),),
            "argument `x` changes type: TensorSpec(shape=(8, 4), dtype=tf.float32, name=None), "
            "TensorSpec(shape=(8, 4), dtype=tf.float64, name=None), TensorSpec(shape=(8, 4), "
            "dtype=tf.int32, name=None)",
            "Cast the inputs to one dtype",
        ),
    ],
    ids=["python-scalar", "shape", "python-list", "dtype"],
)
def test_per_iteration_tracing_names_the_cause_from_the_traces(
    params: Any, evidence: str, fix: str
) -> None:
    lead = _lead(_retraced(_each_call(params)), "per-iteration-tracing")
    assert lead.impact == pytest.approx(0.4, abs=0.01)
    assert lead.evidence[0] == (
        "`tracing_compilation.py:_create_concrete_function` runs 1× per iteration (5 traces in "
        "5 steady-state calls): 40 % of steady-state time (cumulative)"
    )
    assert (
        lead.evidence[-1] == f"`step` (train.py:10) was traced 5× in the steady calls; {evidence}"
    )
    assert lead.fix.startswith(fix)


def test_keras_retracing_its_step_for_new_shapes_says_so() -> None:
    keras_step: dict[str, Any] = {
        "function": "TensorFlowTrainer.make_predict_function.<locals>.one_step_on_data",
        "file": TRAINER,
        "line": 260,
        "name": "one_step_on_data",
    }
    traces = _each_call(lambda c: (("data", tensor(30 + c, 4)),), **keras_step)
    lead = _lead(_retraced(traces), "per-iteration-tracing")
    assert lead.evidence[-1].startswith(
        "Keras's `TensorFlowTrainer.make_predict_function.<locals>.one_step_on_data` is traced "
        "again: argument `data` changes shape in dimension 0: 31, 32, 33, 34"
    )
    assert lead.fix.startswith("Keras traces its step again for each new input shape")


def test_tracing_the_tf_data_functions_of_a_per_call_pipeline_is_secondary() -> None:
    """predict builds a dataset every call, and its map function is traced with it: the
    pipeline leads, the tracing follows and points at it."""
    tracer = Node(TRACER, "_create_concrete_function", 0.2 * N, 3 * N)
    dataset_map = Node(TF + "data/ops/dataset_ops.py", "DatasetV2.map", 0.0, N, [tracer])
    adapter_name = "ArrayDataAdapter.get_tf_dataset"
    adapter = Node(ADAPTERS + "array_data_adapter.py", adapter_name, 0.4 * N, N, [dataset_map])
    root = Node(TRAINER, "TensorFlowTrainer.predict", 0.0, N, [adapter, _graph(0.4 * N)])
    data_function: dict[str, Any] = {
        "function": "StructuredFunctionWrapper.__init__.<locals>.trace_tf_function.<locals>."
        "wrapped_fn",
        "file": TF + "data/ops/structured_function.py",
        "line": 230,
        "name": "Dataset_map_lambda",
    }
    traces = tuple(
        trace(c, (("args_0", tensor()),), function_id=10 * c + k, **data_function)
        for c in range(N + 1)
        for k in range(3)
    )
    report = make_report([root], N, cold=[], method="predict", traces=traces)
    assert _ids(report)[:2] == ["per-call-input-pipeline", "per-iteration-tracing"]
    tracing = report.findings[1]
    assert tracing.impact == pytest.approx(0.2, abs=0.01)
    assert "runs 3× per iteration (15 traces in 5 steady-state calls)" in tracing.evidence[0]
    assert tracing.evidence[-1] == (
        "the traced functions are tf.data's (`Dataset.map`/`flat_map` functions)"
    )
    assert "the fix for `per-call-input-pipeline` removes them too" in tracing.fix


def _traced_under(*callers: Node) -> Report:
    """The user's ``run`` reaches a tracer (1× per call) through ``callers``, outermost
    first; no traces recorded (a .prof read back, say)."""
    inner = Node(TRACER, "_create_concrete_function", 0.4 * N, N)
    for caller in reversed(callers):
        caller.children = [inner]
        inner = caller
    root = Node(USER, "run", 0.0, N, [inner, _graph(0.6 * N)])
    return make_report([root], N, cold=[], method="run", target="train.run")


def test_without_recorded_traces_tracing_under_tf_data_is_via_data() -> None:
    report = _traced_under(Node(TF + "data/ops/dataset_ops.py", "DatasetV2.map", 0.0, N))
    lead = _lead(report, "per-iteration-tracing")
    assert lead.evidence[-1] == "traced from `dataset_ops.py:DatasetV2.map`"
    # no per-call-input-pipeline finding to point at: the fix stands on its own
    assert "per-call-input-pipeline" not in lead.fix and "fewer, longer calls" in lead.fix


@pytest.mark.parametrize(
    "traceback_utils",
    [
        KERAS + "utils/traceback_utils.py",
        TF + "util/traceback_utils.py",
    ],
    ids=["keras", "tensorflow"],
)
def test_without_recorded_traces_the_origin_is_named_through_wrappers(
    traceback_utils: str,
) -> None:
    report = _traced_under(
        Node(traceback_utils, "filter_traceback.<locals>.error_handler", 0.0, N),
        Node(TF + "eager/polymorphic_function/polymorphic_function.py", "Function.__call__", 0, N),
    )
    lead = _lead(report, "per-iteration-tracing")
    assert lead.evidence[-1] == "traced from `train.py:run`"
    assert lead.fix.startswith("Something is retraced on every call")


def test_tfdiags_own_trace_hook_is_never_named_as_the_origin() -> None:
    # An editable install's hook: an absolute path outside site-packages, which would
    # otherwise read as the user's code.
    from tfdiag.records.paths import OWN_ROOT

    report = _traced_under(
        Node(TF + "eager/polymorphic_function/polymorphic_function.py", "Function.__call__", 0, N),
        Node(OWN_ROOT + "capture/traces.py", "recording.<locals>.traced", 0.0, N),
    )
    lead = _lead(report, "per-iteration-tracing")
    assert lead.evidence[-1] == "traced from `train.py:run`"
    assert all("traces.py" not in line for line in lead.evidence)


def test_tracing_twice_in_five_calls_is_not_per_iteration() -> None:
    report = _retraced(_each_call(lambda c: (X, ("i", f"Literal[{c}]"))), tracer_calls=2)
    assert "per-iteration-tracing" not in _ids(report)


def _run_eagerly_fit(*, wrapper_s: float, tracing_s: float = 0.0, facts: Any = ()) -> Report:
    """Keras 3 ``fit`` with ``run_eagerly=True``: the train step runs through autograph's
    pass-through wrapper, its 200 ops dispatched one by one; ``tracing_s`` of real tracing
    (tf.data's functions of the pipeline built per call) per iteration."""
    ops = 200 * N
    dispatch = Node("~", FAST_PATH, 20e-6 * ops, ops)
    matmul = Node(TF + "ops/gen_math_ops.py", "mat_mul", 0.01 * N, ops, [dispatch])
    dense = Node(KERAS + "layers/core/dense.py", "Dense.call", 0.02 * N, N, [matmul])
    train_step = Node(TRAINER, "TensorFlowTrainer.train_step", 0.002 * N, N, [dense])
    wrapper_name = "do_not_convert.<locals>.wrapper"
    wrapper = Node(TF + "autograph/impl/api.py", wrapper_name, wrapper_s * N, N, [train_step])
    children = [wrapper]
    if tracing_s:
        children.append(Node(TRACER, "_create_concrete_function", tracing_s * N, N))
    fit = Node(TRAINER, "TensorFlowTrainer.fit", 0.001 * N, N, children)
    return make_report([fit], N, cold=[], method="fit", facts=facts)


def test_autographs_pass_through_wrapper_is_not_tracing() -> None:
    """The wrapper that runs Keras 3's eager step as it is lives in tensorflow/python/autograph/
    (graph building, by path): its time is not tracing time."""
    report = _run_eagerly_fit(wrapper_s=0.05, tracing_s=0.002, facts=(("run_eagerly", "True"),))
    steady = report.analysis.steady_s / N
    assert report.analysis.steady_share(Category.GRAPH_BUILDING) == pytest.approx(
        0.002 / steady, rel=0.01
    )
    found = _found(report)
    assert _ids(report)[0] == "eager-execution"
    # The true tracing (tf.data's functions) is reported at its own small share.
    assert found["per-iteration-tracing"].impact == pytest.approx(0.002 / steady, abs=0.005)


# -- eager-execution -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("facts", "first", "fix"),
    [
        (
            (("functions_run_eagerly", "False"), ("run_eagerly", "True")),
            "the model's Keras step runs as Python, op by op (not as a graph)",
            "Turn off `run_eagerly=True` where your code sets it",
        ),
        # tf_keras: run_eagerly is True because a layer is dynamic, not because it was set
        (
            (("run_eagerly", "True"), ("run_eagerly_set", "None"), ("dynamic", "True")),
            "the model's Keras step runs as Python, op by op (not as a graph)",
            "Turn off `dynamic=True` where your code sets it",
        ),
        # No facts (a .prof read back, say): Keras' train_step ran and no graph function did;
        # which setting did it is not in the record, so the fix does not claim one.
        (
            (),
            "the model's Keras step runs as Python, op by op (not as a graph)",
            "Find what makes the step run eagerly and turn it off",
        ),
        (
            (("functions_run_eagerly", "True"), ("run_eagerly", "False")),
            "`tf.config.functions_run_eagerly()` is True",
            "Turn off `tf.config.run_functions_eagerly(True)` where your code sets it",
        ),
    ],
    ids=[
        "run_eagerly-fact",
        "dynamic-fact",
        "keras-step-ran-eagerly",
        "functions_run_eagerly-fact",
    ],
)
def test_eager_execution_names_the_setting_that_makes_it_eager(
    facts: Any, first: str, fix: str
) -> None:
    lead = _lead(_run_eagerly_fit(wrapper_s=0.0, facts=facts), "eager-execution")
    assert lead.evidence[0] == first
    assert lead.evidence[1].startswith("200 eager op dispatches per iteration")
    assert lead.fix.startswith(fix)


def _eager_loop(ops: int, graph_calls: int = 0, graph_s: float = 0.001) -> Report:
    """The user's own training loop: ``ops`` tiny eager ops per call (dispatch, mostly),
    beside ``graph_calls`` graph calls of ``graph_s`` in all per call."""
    fast = Node("~", FAST_PATH, 20e-6 * ops * N, ops * N)
    children = [Node(TF + "ops/gen_math_ops.py", "mat_mul", 0.01 * N, ops * N, [fast])]
    if graph_calls:
        children.append(_graph(graph_s * N, graph_calls * N))
    root = Node(USER, "train_step", 0.01 * N, N, children)
    return make_report([root], N, cold=[], method="train_step", target="train.train_step")


def test_eager_execution_in_a_custom_loop_says_tf_function() -> None:
    lead = _lead(_eager_loop(200), "eager-execution")
    assert lead.evidence[0].startswith("200 eager op dispatches per iteration")
    # no gradient is computed: the fix says nothing of a train step
    assert lead.fix.startswith("Put the work done on every call in a function decorated with")
    assert "train step" not in lead.fix and "tape.gradient" not in lead.fix


def test_eager_execution_of_a_training_step_says_decorate_it() -> None:
    ops = 200
    fast = Node("~", FAST_PATH, 20e-6 * ops * N, ops * N)
    grad = Node(TF + "eager/backprop.py", "GradientTape.gradient", 0.002 * N, N, [fast])
    root = Node(USER, "train_step", 0.01 * N, N, [grad])
    report = make_report([root], N, cold=[], method="train_step", target="train.train_step")
    lead = _lead(report, "eager-execution")
    assert lead.fix.startswith("Decorate your train step with `@tf.function`")


def test_eager_ops_around_a_graph_step_are_found_by_their_volume() -> None:
    """12 graph calls per iteration, and 400 eager ops from ``tf.summary.histogram`` around
    them taking most of the time: eager-execution, naming where they come from."""
    fast = Node("~", FAST_PATH, 20e-6 * 400 * N, 400 * N)
    wrapper = Node(TF + "ops/gen_math_ops.py", "mat_mul", 0.02 * N, 400 * N, [fast])
    histogram = Node(TF + "ops/summary_ops_v2.py", "histogram", 0.01 * N, 12 * N, [wrapper])
    root = Node(USER, "train_epoch", 0.001 * N, N, [histogram, _graph(0.005 * N, 12 * N)])
    report = make_report([root], N, cold=[], method="train_epoch", target="train.train_epoch")
    lead = _lead(report, "eager-execution")
    assert lead.evidence[0].startswith(
        "400 eager op dispatches per iteration (`TFE_Py_FastPathExecute`) beside 12 graph "
        "function calls"
    )
    assert (
        lead.evidence[2]
        == "most of them come from `summary_ops_v2.py:histogram`, called from your "
        "`train_epoch` (train.py:1)"
    )
    assert lead.fix.startswith(
        "A graph function runs on every iteration, but `summary_ops_v2.py:histogram` runs "
        "eagerly beside it"
    )
    # All of `histogram` (its Python, the op wrappers, their dispatch) over the steady
    # iteration; no kernel time to leave out.
    assert lead.impact == pytest.approx((0.01 + 0.02 + 0.008) / 0.044, abs=0.01)


def test_eager_ops_keras_runs_to_build_a_pipeline_per_call_are_not_eager_execution() -> None:
    """predict's data adapter dispatches ~16 eager ops per call to build its tf.data pipeline
    (the seed-003 case): they are per-call-input-pipeline's, not eager ops around a graph."""
    fast = Node("~", FAST_PATH, 20e-6 * 16 * N, 16 * N)
    wrapper = Node(TF + "ops/gen_dataset_ops.py", "tensor_slice_dataset", 0.01 * N, 16 * N, [fast])
    adapter = Node(
        ADAPTERS + "array_data_adapter.py",
        "ArrayDataAdapter.get_tf_dataset",
        0.01 * N,
        N,
        [wrapper],
    )
    root = Node(TRAINER, "TensorFlowTrainer.predict", 0.001 * N, N, [adapter, _graph(0.005 * N)])
    ids = _ids(make_report([root], N, cold=[], method="predict"))
    assert "per-call-input-pipeline" in ids and "eager-execution" not in ids


@pytest.mark.parametrize(
    ("ops", "graph_calls", "graph_s"),
    [(9, 0, 0.001), (200, 1, 1.0)],
    ids=["9-ops", "eager-ops-small-beside-the-graph"],
)
def test_eager_execution_near_misses(ops: int, graph_calls: int, graph_s: float) -> None:
    assert "eager-execution" not in _ids(_eager_loop(ops, graph_calls, graph_s))


@pytest.mark.parametrize(
    "model_file",
    [
        KERAS + "models/sequential.py",
        TF_KERAS + "engine/sequential.py",
    ],
    ids=["keras3", "tf_keras"],
)
def test_ops_run_by_building_a_model_are_the_rebuilds_not_eager_executions(
    model_file: str,
) -> None:
    init_ops = 100 * N
    initializer = Node(TF + "ops/init_ops_v2.py", "GlorotUniform.__call__", 0.01 * N, init_ops)
    initializer.children = [Node("~", FAST_PATH, 20e-6 * init_ops, init_ops)]
    build = Node(model_file, "Sequential.__init__", 0.05 * N, N, [initializer])
    call_ops = 20 * N
    layer_call = Node(KERAS + "layers/layer.py", "Layer.__call__", 0.01 * N, N)
    layer_call.children = [Node("~", FAST_PATH, 20e-6 * call_ops, call_ops)]
    root = Node("/home/me/serve.py", "answer", 0.0, N, [build, layer_call])
    report = make_report([root], N, cold=[], method="answer", target="serve.answer")
    assert _ids(report)[0] == "model-rebuilt-per-call"
    assert _found(report)["eager-execution"].impact < 0.2


# -- python-in-graph -------------------------------------------------------------------------

PY_OP = OpRow("Host", "EagerPyFunc", "sequential/lambda/EagerPyFunc", 6, 0.015, 0.015)


def _graph_step(
    tf_profile: TfProfile | None,
    *,
    py_callbacks: tuple[PyCallback, ...] = (),
    facts: Any = (),
    extra: tuple[Node, ...] = (),
) -> Report:
    """``train_on_batch`` × N running one graph call each, with a TF profiler record."""
    root = Node(TRAINER, "TensorFlowTrainer.train_on_batch", 0.001 * N, N, [_graph(0.009 * N)])
    root.children += list(extra)
    return make_report(
        [root],
        N,
        cold=[],
        method="train_on_batch",
        iteration_s=(0.01,) * N,
        tf_profile=tf_profile,
        py_callbacks=py_callbacks,
        facts=facts,
    )


def test_python_in_graph_leads_with_the_op_and_the_python_it_runs() -> None:
    tf = tf_record(
        wall_s=0.01, op_s=0.007, py_funcs=PyFuncs(step_s=0.005 * 3, step_calls=6), top_ops=(PY_OP,)
    )
    called = (PyCallback("to_upper", "/home/me/layers.py", 12, "py_function", 10, 0.025, 10),)
    lead = _lead(_graph_step(tf, py_callbacks=called), "python-in-graph")
    assert lead.impact == pytest.approx(0.5, abs=0.01)
    assert lead.evidence == (
        "Python ops (`tf.py_function`/`tf.numpy_function`) run 2× per iteration inside the "
        "step's graph, 2.5 ms each: 50 % of the time (TF profiler)",
        "the op is `sequential/lambda/EagerPyFunc`",
        "the Python it runs: `to_upper` (layers.py:12), 2 calls per iteration, 2.50 ms each",
    )
    assert lead.fix.startswith("Rewrite the Python function with TensorFlow ops")


def test_python_in_graph_near_misses() -> None:
    small = tf_record(wall_s=0.01, op_s=0.007, py_funcs=PyFuncs(step_s=0.0009 * 3, step_calls=3))
    assert "python-in-graph" not in _ids(_graph_step(small))
    # The same Python in the input pipeline is the pipeline's (input-bound), not the step's.
    in_pipeline = tf_record(
        wall_s=0.01,
        op_s=0.007,
        input_wait_s=0.004,
        py_funcs=PyFuncs(pipeline_s=0.005 * 3, pipeline_calls=6),
    )
    ids = _ids(_graph_step(in_pipeline))
    assert "python-in-graph" not in ids and ids[0] == "input-bound"
    assert "python-in-graph" not in _ids(_graph_step(None))  # only the TF profiler can tell


# -- input-bound -----------------------------------------------------------------------------


def _stages(slowest: str) -> tuple[InputStage, ...]:
    """xprof's iterators: the root and prefetch waiting, ``slowest`` doing the work."""
    return (
        InputStage("Iterator::Root", 3, 0.03, 0.001),
        InputStage("Iterator::Root::Prefetch", 3, 0.03, 0.002),
        InputStage(f"Iterator::Root::Prefetch::{slowest}", 3, 0.02, 0.015),
    )


@pytest.mark.parametrize(
    ("slowest", "py_funcs", "stage", "fix"),
    [
        (
            "MapAndBatch",
            None,
            "the `map` function, once per element before `batch`",
            "The `map` function runs once per element, before `batch`",
        ),
        (
            "ParallelMapV2",
            PyFuncs(pipeline_s=0.015, pipeline_calls=96),
            "the parallel `map` function",
            "The pipeline runs Python (`tf.py_function`/`tf.numpy_function`) for every element",
        ),
        (
            "FlatMap[0]::Generator",
            PyFuncs(pipeline_s=0.015, pipeline_calls=96),
            "the Python generator (`Dataset.from_generator`)",
            "A Python generator feeds the pipeline one element at a time",
        ),
        (
            "ParallelInterleaveV4[0]::TFRecord",
            None,
            "reading TFRecord files",
            "Reading the files is the bottleneck",
        ),
    ],
    ids=["map-before-batch", "py-function", "generator", "read"],
)
def test_input_bound_with_the_tf_profiler_names_the_slowest_stage(
    slowest: str, py_funcs: PyFuncs | None, stage: str, fix: str
) -> None:
    tf = tf_record(
        wall_s=0.01,
        op_s=0.004,
        input_wait_s=0.006,
        input_stages=_stages(slowest),
        py_funcs=py_funcs,
    )
    lead = _lead(_graph_step(tf), "input-bound")
    assert lead.impact == pytest.approx(0.6, abs=0.01)
    assert lead.evidence[0] == (
        "TF profiler: each iteration waits 6.0 ms of 10.0 ms for its input (60 %)"
    )
    assert lead.evidence[1] == (
        f"the slowest stage is {stage}: `Iterator::Root::Prefetch::{slowest}`, 5.0 ms of its own "
        "per iteration"
    )
    if py_funcs is not None:
        assert lead.evidence[2] == (
            "Python in the pipeline (`tf.py_function`/`numpy_function`/a generator): 32 calls "
            "per iteration, 5.0 ms per iteration"
        )
    assert lead.fix.startswith(fix)


def test_input_bound_on_a_py_dataset_says_workers() -> None:
    tf = tf_record(wall_s=0.01, op_s=0.004, input_wait_s=0.006)
    facts = (("x.kind", "PyDataset"), ("x.class", "Frames"), ("x.workers", "1"))
    lead = _lead(_graph_step(tf, facts=facts), "input-bound")
    assert lead.evidence[-1] == "the input is `Frames` (a PyDataset) with workers=1"
    assert lead.fix.startswith("The `PyDataset` prepares batches on the training thread")
    assert "workers=4" in lead.fix


@pytest.mark.parametrize(
    ("flavour", "workers", "fix"),
    [
        ("keras3", 4, "The `PyDataset` already has several workers"),
        ("tf_keras", 1, "tf_keras takes its workers in `fit()`"),
        ("tf_keras", 3, "The `Sequence` already has several workers"),
    ],
)
def test_input_bound_py_dataset_fix_fits_the_flavour_and_the_workers(
    flavour: str, workers: int, fix: str
) -> None:
    tf = tf_record(wall_s=0.01, op_s=0.004, input_wait_s=0.006)
    kind = "Sequence" if flavour == "tf_keras" else "PyDataset"
    callback = PyCallback(
        f"Frames.__getitem__ (a {kind}, workers={workers}, use_multiprocessing=False)",
        USER, 10, "pydataset", 4 * N, 0.5 * N,
    )  # fmt: skip
    report = _graph_step(tf, py_callbacks=(callback,))
    report = dataclasses.replace(report, call=dataclasses.replace(report.call, flavour=flavour))
    lead = _lead(report, "input-bound")
    assert (
        f"the input is a Keras {kind} (workers={workers}, use_multiprocessing=False)"
        in " ".join(lead.evidence)
    )
    assert fix in lead.fix


def test_input_bound_without_the_tf_profiler_reads_the_users_getitem() -> None:
    """Keras 3 reads a PyDataset on the training thread: the user's ``__getitem__`` runs
    under the adapter, so its time is the pipeline's."""
    getitem = Node(USER, "Frames.__getitem__", 0.5 * N, 4 * N)
    adapter_name = "PyDatasetAdapter._get_iterator"
    adapter = Node(ADAPTERS + "py_dataset_adapter.py", adapter_name, 0.0, N, [getitem])
    fit = Node(TRAINER, "TensorFlowTrainer.fit", 0.0, N, [adapter, _graph(0.5 * N, 4 * N)])
    lead = _lead(make_report([fit], N, cold=[], method="fit"), "input-bound")
    assert lead.impact == pytest.approx(0.5, abs=0.01)
    assert lead.evidence == (
        "reading the next batch takes 50 % of steady-state time",
        "the user's `train.py:Frames.__getitem__` runs on the training thread (no workers)",
    )
    assert "workers=4" in lead.fix


@pytest.mark.parametrize(("elements", "per_element"), [(600, True), (40, False)])
def test_a_loop_reading_one_element_at_a_time_gets_the_batch_fix(
    elements: int, per_element: bool
) -> None:
    # for x in ds (unbatched): 600 next() calls per call, each a round trip into tf.data.
    nxt = Node(ITERATOR, "OwnedIterator.__next__", 0.7 * N, elements * N)
    root = Node(USER, "one_pass", 0.0, N, [nxt, _graph(0.3 * N, elements * N)])
    tf = tf_record(wall_s=0.01, op_s=0.002, input_wait_s=0.007, input_stages=_stages("Map"))
    report = make_report(
        [root], N, cold=[], method="one_pass", target="train.one_pass", tf_profile=tf
    )
    lead = _lead(report, "input-bound")
    line = f"your loop calls the dataset iterator's `next()` {elements}× per call"
    assert any(e.startswith(line) for e in lead.evidence) is per_element
    assert lead.fix.startswith("Your loop reads the dataset one element at a time") is per_element


def test_input_bound_names_a_window_flat_map_pipeline_and_frames_the_series() -> None:
    nested = tuple(
        InputStage(f"Iterator::Root::Prefetch::MapAndBatch::FlatMap[{i}]::BatchV2", 3, 1e-3, 1e-3)
        for i in (7, 8, 9)
    )
    stages = (
        *_stages("MapAndBatch"),
        InputStage("Iterator::Root::Prefetch::MapAndBatch::FlatMap", 3, 0.01, 0.008),
        InputStage("Iterator::Root::Prefetch::MapAndBatch::FlatMap::Window", 3, 0.002, 0.001),
        *nested,
    )
    tf = tf_record(wall_s=0.01, op_s=0.004, input_wait_s=0.006, input_stages=stages)
    lead = _lead(_graph_step(tf), "input-bound")
    assert lead.evidence[2] == (
        "`window().flat_map()` makes a nested dataset per window: a `Window` stage under "
        "`FlatMap`, and per-window `FlatMap[i]` iterators (3 kept in the trace's stages)"
    )
    assert lead.fix.startswith("`Dataset.window(n, shift=…)` then `flat_map(")
    assert "tf.signal.frame(series, n, frame_step=shift)" in lead.fix
    # A flat_map without window() is not this pipeline.
    plain = tf_record(wall_s=0.01, op_s=0.004, input_wait_s=0.006, input_stages=stages[:4])
    assert not _lead(_graph_step(plain), "input-bound").fix.startswith("`Dataset.window(")


def _pipeline(stage: str, self_s: float) -> tuple[InputStage, ...]:
    """A pipeline whose ``stage`` does ``self_s`` of work in each of 3 steps."""
    return (
        InputStage("Iterator::Root", 3, 3 * self_s, 0.001),
        InputStage(f"Iterator::Root::Prefetch::{stage}", 3, 3 * self_s, 3 * self_s),
    )


@pytest.mark.parametrize(
    ("input_op_s", "stage", "found"),
    [(0.19, "ParallelMapV2", True), (0.04, "ParallelMapV2", False), (0.19, "BatchV2", False)],
    ids=["a-heavy-map", "a-light-map", "only-slicing-and-batching"],
)
def test_input_bound_on_a_host_counts_a_pipeline_that_shares_the_cores(
    input_op_s: float, stage: str, found: bool
) -> None:
    # No step time measured (no wait), but tf.data's ops take 1.9x the step's wall time on
    # the two cores the model's ops run on: caching the pipeline is what speeds it up. When
    # that time is the batching of slices (held-out set D's healthy shuffle-batch-prefetch
    # loop was told it), no cache or parallel map removes it: not a finding.
    stages = _pipeline(stage, input_op_s)
    tf = tf_record(
        wall_s=0.1, op_s=0.3, input_op_s=input_op_s, input_wait_s=0.0, input_stages=stages
    )
    report = _graph_step(tf)
    if not found:  # 0.4x the wall time, or plumbing: not the bottleneck
        assert "input-bound" not in _ids(report)
        return
    lead = _lead(report, "input-bound")
    assert lead.impact == pytest.approx(0.19 / 0.3, abs=0.01)
    assert lead.evidence[0] == (
        "TF profiler: tf.data's ops take 190.0 ms per iteration of 100.0 ms, on the same CPU "
        "cores as the model's ops (63 % of all op time): the step waits for its input 0 %, "
        "but shares the cores with it"
    )
    assert lead.fix.startswith("The pipeline's own work runs on the same CPU cores")
    assert "`ds = ds.cache()`" in lead.fix


def test_input_bound_near_misses() -> None:
    small_wait = tf_record(wall_s=0.01, op_s=0.004, input_wait_s=0.0009)
    assert "input-bound" not in _ids(_graph_step(small_wait))
    # Building a pipeline on every call is not waiting for one, with the TF profiler too.
    tf = tf_record(wall_s=0.01, op_s=0.001, input_op_s=0.0005, input_wait_s=0.0005)
    ids = _ids(_predict_building_a_pipeline(0.5, tf))
    assert ids[0] == "per-call-input-pipeline" and "input-bound" not in ids


# -- conversion-overhead ---------------------------------------------------------------------


def _converting(
    share: float,
    *,
    args: tuple[str, ...] = (),
    inside_op: bool = False,
    facts: tuple[tuple[str, str], ...] = (),
) -> Report:
    """``predict_on_batch`` × N converting its input (``share`` of the time), or an op
    converting its own arguments (``inside_op``); ``facts`` as ``run`` saw the calls."""
    convert = Node(TF + "framework/constant_op.py", "_constant_impl", share * N, N)
    if inside_op:
        convert = Node(TF + "ops/math_ops.py", "add", 0.0, N, [convert])
    root = Node(
        TRAINER, "TensorFlowTrainer.predict_on_batch", 0.0, N, [convert, _graph((1 - share) * N)]
    )
    return make_report([root], N, cold=[], method="predict_on_batch", args=args, facts=facts)


@pytest.mark.parametrize(
    ("arg", "fix"),
    [
        ("ndarray float64 (32, 4)", "The input is float64: convert it once, up front"),
        ("[[1.0, 2.0, 3.0, 4.0]]", "Build the input tensor once (`tf.constant(...)`"),
        ("ndarray float32 (32, 4)", "Convert inputs once, outside the loop: `x = tf."),
    ],
    ids=["float64", "python-lists", "float32"],
)
def test_conversion_overhead_of_the_calls_inputs(arg: str, fix: str) -> None:
    lead = _lead(_converting(0.3, args=(arg,)), "conversion-overhead")
    assert lead.impact == pytest.approx(0.3, abs=0.01)
    assert lead.evidence[0] == (
        "converting the call's inputs to tensors: 30 %, outputs back to NumPy: 0 % of "
        "steady-state time (non-overlapping)"
    )
    float64 = "input is float64 (ndarray float64 (32, 4)); Keras models compute in float32"
    assert (float64 in lead.evidence) is ("float64" in arg)
    assert lead.fix.startswith(fix)


def test_new_arguments_on_every_call_are_not_a_conversion_to_move_out_of_the_loop() -> None:
    arg = ("ndarray float32 (32, 4)",)
    served = (("calls.later", "9"), ("calls.same_inputs", "0"))
    assert "conversion-overhead" not in _ids(_converting(0.3, args=arg, facts=served))
    # the same array again on some calls: its conversion is the user's to move
    reused = (("calls.later", "9"), ("calls.same_inputs", "6"))
    lead = _lead(_converting(0.3, args=arg, facts=reused), "conversion-overhead")
    assert lead.impact == pytest.approx(0.3, abs=0.01)
    assert (
        "6 of the 9 later calls passed an argument the call before had passed, converted again"
        in lead.evidence
    )
    assert lead.fix.startswith("Convert inputs once, outside the loop")


def test_conversions_inside_ops_or_under_the_share_are_not_the_inputs() -> None:
    assert "conversion-overhead" not in _ids(_converting(0.3, inside_op=True))
    # tensors already: the conversion left is TF binding a tf.function's arguments
    tensors = ("EagerTensor float32 (32, 4)", "EagerTensor float32 (32, 1)")
    assert "conversion-overhead" not in _ids(_converting(0.3, args=tensors))
    assert "conversion-overhead" not in _ids(_converting(0.09))


def _autopacking(*, inside_op: bool) -> Report:
    """A nested Python list converted through array_ops' autopacking (its element-type scan,
    a generator in tensorflow/python/ops, is most of the time), 70 % of each call: bound as a
    tf.function's argument, or converted by an eager op for its own arguments."""
    scan = Node(TF + "ops/array_ops.py", "_should_not_autopack.<locals>.<genexpr>", 0.6 * N, N)
    check = Node(TF + "ops/array_ops.py", "_should_not_autopack", 0.0, N, [scan])
    pack = Node(TF + "ops/array_ops.py", "_autopacking_helper", 0.1 * N, N)
    autopack = Node(
        TF + "ops/array_ops.py", "_autopacking_conversion_function", 0.0, N, [check, pack]
    )
    convert = Node(TF + "framework/ops.py", "convert_to_tensor", 0.0, N, [autopack])
    if inside_op:
        convert = Node(TF + "ops/math_ops.py", "add", 0.0, N, [convert])
    root = Node(TRAINER, "TensorFlowTrainer.predict_on_batch", 0.0, N, [convert, _graph(0.3 * N)])
    return make_report([root], N, cold=[], method="predict_on_batch", args=("[[1.0, 2.0]]",))


def test_a_nested_list_autopacked_for_the_call_is_the_inputs_conversion() -> None:
    # the scan's caller is in tensorflow/python/ops (an op-internal frame) but converts
    # itself: whose conversion it is, the chain's first caller outside it says
    lead = _lead(_autopacking(inside_op=False), "conversion-overhead")
    assert lead.impact == pytest.approx(0.7, abs=0.01)
    assert lead.fix.startswith("Build the input tensor once (`tf.constant(...)`")
    assert "conversion-overhead" not in _ids(_autopacking(inside_op=True))


def test_outputs_copied_back_to_numpy_are_not_the_inputs_conversion() -> None:
    copy = Node(
        "~",
        "<method '_numpy_internal' of 'tensorflow.python.framework.ops.EagerTensor' objects>",
        0.3 * N,
        N,
    )
    numpy = Node(TF + "framework/ops.py", "_EagerTensorBase._numpy", 0.0, N, [copy])
    outputs = Node(TRAINER, "convert_to_np_if_not_ragged", 0.0, N, [numpy])
    root = Node(TRAINER, "TensorFlowTrainer.predict_on_batch", 0.0, N, [_graph(0.7 * N), outputs])
    report = make_report([root], N, cold=[], method="predict_on_batch")
    found = _found(report)["conversion-overhead"]
    assert found.evidence[0] == (
        "converting the call's inputs to tensors: 0 %, outputs back to NumPy: 30 % of "
        "steady-state time (non-overlapping)"
    )
    # the fix is about the outputs, not a conversion of inputs the evidence shows none of
    assert found.fix.startswith("The call copies its outputs back to NumPy")
    assert "input" not in found.fix.split(":")[0]


def test_a_training_calls_metrics_made_numbers_get_the_logs_fix() -> None:
    logs = Node(KERAS + "utils/python_utils.py", "pythonify_logs", 0.3 * N, N)
    root = Node(TRAINER, "TensorFlowTrainer.train_on_batch", 0.0, N, [_graph(0.7 * N), logs])
    found = _found(make_report([root], N, cold=[], method="train_on_batch"))
    assert found["conversion-overhead"].fix.startswith(
        "The call turns the step's metrics into Python numbers on every call"
    )


# -- callback-overhead -----------------------------------------------------------------------


def _fit_with_callback(
    callback: Node,
    *,
    flavour: str = "keras3",
    rest: float = 0.7,
    facts: tuple[tuple[str, str], ...] = (),
) -> Report:
    """``fit`` × N of 4 steps each, ``callback`` run by the CallbackList's batch-end hook."""
    s = 4 * N
    if flavour == "keras3":
        hook_file, trainer, step_name = CALLBACK_LIST, TRAINER, STEP_FUNCTION
        hook = Node(hook_file, "CallbackList.on_train_batch_end", 1e-5 * s, s, [callback])
    else:
        hook_file = TF_KERAS + "callbacks.py"
        trainer = TF_KERAS + "engine/training.py"
        step_name = "Model.make_train_function.<locals>.train_function"
        inner = Node(hook_file, "CallbackList._call_batch_hook", 1e-5 * s, s, [callback])
        hook = Node(hook_file, "CallbackList.on_train_batch_end", 1e-5 * s, s, [inner])
    children = [
        Node(trainer, step_name, 0.0, s, [_graph(rest * N, s)]),
        Node(hook_file, "CallbackList.on_train_batch_begin", 1e-5 * s, s),
        Node(hook_file, "CallbackList.on_epoch_begin", 1e-5 * N, N),
        hook,
    ]
    fit_name = "TensorFlowTrainer.fit" if flavour == "keras3" else "Model.fit"
    root = Node(trainer, fit_name, 0.0, N, children)
    return make_report([root], N, cold=[], method="fit", facts=facts)


@pytest.mark.parametrize("flavour", ["keras3", "tf_keras"])
def test_a_users_callback_under_the_hooks_is_counted_and_named(flavour: str) -> None:
    callback = Node(USER, "LossLogger.on_train_batch_end", 0.3 * N, 4 * N)
    lead = _lead(_fit_with_callback(callback, flavour=flavour), "callback-overhead")
    assert lead.impact == pytest.approx(0.3, abs=0.01)
    assert lead.evidence[0].startswith("callbacks & progress bar: 30 % of steady-state time")
    assert lead.evidence[1] == (
        "your callback `LossLogger.on_train_batch_end` takes 30 % of steady-state time"
    )
    assert lead.fix.startswith(
        "Your callback's `LossLogger.on_train_batch_end` runs on every batch"
    )


def test_what_a_users_callback_calls_counts_as_the_callbacks() -> None:
    """The user's callback calls ``model.predict`` on every batch: its time (a pipeline
    built each time) is under the hooks, and counted there."""
    s = 4 * N
    adapter_name = "ArrayDataAdapter.get_tf_dataset"
    adapter = Node(ADAPTERS + "array_data_adapter.py", adapter_name, 0.25 * N, s)
    predict = Node(TRAINER, "TensorFlowTrainer.predict", 0.0, s, [adapter])
    callback = Node(USER, "Probe.on_train_batch_end", 0.05 * N, s, [predict])
    found = _found(_fit_with_callback(callback, rest=0.7))
    assert found["callback-overhead"].impact == pytest.approx(0.3, abs=0.01)
    assert found["callback-overhead"].evidence[0] == (
        "callbacks & progress bar: 30 % of steady-state time, everything their hooks run "
        "included (5 % in the callbacks' own code)"
    )


@pytest.mark.parametrize(
    ("callback", "line", "fix"),
    [
        (
            Node(
                KERAS + "callbacks/progbar_logger.py",
                "ProgbarLogger.on_train_batch_end",
                0.0,
                4 * N,
                [Node(KERAS + "utils/progbar.py", "Progbar.update", 0.3 * N, 4 * N)],
            ),
            "the progress bar takes 30 % of steady-state time",
            "`verbose=1` redraws the progress bar every batch",
        ),
        (
            Node(KERAS + "callbacks/tensorboard.py", "TensorBoard.on_train_batch_end", 1.5, 4 * N),
            "`TensorBoard(update_freq=1, histogram_freq=1, profile_batch=2)` takes 30 % of "
            "steady-state time",
            "`TensorBoard(update_freq=1, histogram_freq=1, profile_batch=2)` writes summaries "
            "during the epoch: pass `TensorBoard(update_freq='epoch', histogram_freq=0, "
            "profile_batch=0)`",
        ),
        (
            Node(
                KERAS + "callbacks/model_checkpoint.py",
                "ModelCheckpoint.on_train_batch_end",
                0.0,
                4 * N,
                [Node(KERAS + "callbacks/model_checkpoint.py", "ModelCheckpoint._save_model", 1.5)],
            ),
            "`ModelCheckpoint(save_freq=2)` takes 30 % of steady-state time",
            "`ModelCheckpoint(save_freq=2)` writes the model during the epoch, in line with the "
            "steps: save once per epoch (`ModelCheckpoint(..., save_freq='epoch')`",
        ),
        (
            Node(KERAS + "callbacks/csv_logger.py", "CSVLogger.on_train_batch_end", 1.5, 4 * N),
            "`CSVLogger` takes 30 % of steady-state time",
            "`CSVLogger` does per-batch work: set it to work once per epoch",
        ),
    ],
    ids=["progbar", "tensorboard", "checkpoint", "other-keras-callback"],
)
def test_keras_own_callbacks_get_their_own_fix(callback: Node, line: str, fix: str) -> None:
    facts = (
        ("callbacks", "TensorBoard,ModelCheckpoint,CSVLogger"),
        ("callback.TensorBoard.update_freq", "1"),
        ("callback.TensorBoard.histogram_freq", "1"),
        ("callback.TensorBoard.profile_batch", "2"),
        ("callback.ModelCheckpoint.save_freq", "2"),
    )
    lead = _lead(_fit_with_callback(callback, facts=facts), "callback-overhead")
    assert lead.evidence[1] == line
    assert lead.fix.startswith(fix)
    assert "{" not in lead.fix


def test_a_checkpoint_the_profile_cannot_name_is_named_by_its_settings() -> None:
    """Callback time no owner can be found for (the hooks' own), beside a
    ``ModelCheckpoint`` given a batch ``save_freq``: its settings name it."""
    callback = Node(CALLBACK_LIST, "CallbackList._call_batch_hook", 0.3 * N, 4 * N)
    saving = (("callbacks", "ModelCheckpoint"), ("callback.ModelCheckpoint.save_freq", "5"))
    lead = _lead(_fit_with_callback(callback, facts=saving), "callback-overhead")
    assert lead.fix.startswith("`ModelCheckpoint(save_freq=5)` writes the model")
    # Saving once per epoch: nothing to blame it for; the generic fix.
    per_epoch = (("callbacks", "ModelCheckpoint"), ("callback.ModelCheckpoint.save_freq", "epoch"))
    lead = _lead(_fit_with_callback(callback, facts=per_epoch), "callback-overhead")
    assert "ModelCheckpoint" not in lead.fix


def test_hook_dispatch_with_no_callback_behind_it_names_no_callback() -> None:
    """The hooks' own code is the cost and the heaviest Keras callback holds a sliver of it
    (its base class's empty hooks): no callback is blamed; the fix is steps_per_execution."""
    sliver = Node(KERAS + "callbacks/callback.py", "Callback.on_train_batch_end", 1e-4, 4 * N)
    dispatch = Node(CALLBACK_LIST, "CallbackList._call_batch_hook", 0.3 * N, 4 * N, [sliver])
    lead = _lead(_fit_with_callback(dispatch), "callback-overhead")
    assert lead.fix.startswith("No callback's own code is the cost")
    assert "steps_per_execution" in lead.fix and "`Callback`" not in lead.fix
    # the same dispatch beside a checkpoint saving every 5 batches: its settings name it
    saving = (("callbacks", "ModelCheckpoint"), ("callback.ModelCheckpoint.save_freq", "5"))
    lead = _lead(_fit_with_callback(dispatch, facts=saving), "callback-overhead")
    assert lead.fix.startswith("`ModelCheckpoint(save_freq=5)` writes the model")


@pytest.mark.parametrize("method", ["evaluate", "predict"])
def test_a_keras_call_inside_a_users_callback_gets_the_on_batch_fix(method: str) -> None:
    # The callback calls model.evaluate every few batches (through Keras' traceback filter):
    # a pipeline per call, which test_on_batch / model(x) on a held batch does not build.
    name = "TensorFlowTrainer." + method
    nested = Node(TRAINER, name, 0.35 * N, 2 * N)
    wrapper = Node(
        KERAS + "utils/traceback_utils.py",
        "filter_traceback.<locals>.error_handler",
        0.0,
        2 * N,
        [nested],
    )
    callback = Node(USER, "Validate.on_train_batch_end", 0.05 * N, 4 * N, [wrapper])
    lead = _lead(_fit_with_callback(callback, rest=0.6), "callback-overhead")
    assert lead.evidence[-1].startswith(f"your callback calls `model.{method}` 2× per iteration")
    remedy = "test_on_batch" if method == "evaluate" else "model(x, training=False)"
    assert remedy in lead.fix


def test_a_users_callback_just_under_the_share_is_not_reported() -> None:
    callback = Node(USER, "LossLogger.on_train_batch_end", 0.04 * N, 4 * N)
    assert "callback-overhead" not in _ids(_fit_with_callback(callback, rest=0.96))


# -- compute-bound ---------------------------------------------------------------------------


def test_compute_bound_alone_says_python_side_changes_wont_help() -> None:
    report = _graph_step(tf_record(wall_s=0.01, op_s=0.009, input_wait_s=0.0005))
    lead = _lead(report, "compute-bound")
    assert lead.impact == pytest.approx(0.9, abs=0.01)
    assert lead.evidence == (
        "TF profiler: the model's ops take 9.0 ms of 10.0 ms per traced iteration (90 %); "
        "waiting for input 5 %; tf.data ops and Python ops not counted",
    )
    assert "Python-side changes won't help" in lead.fix
    assert "`jit_compile=True` in `compile()`" in lead.fix  # a Keras call: compile() has it


def test_compute_bound_in_a_custom_loop_names_xla_on_the_tf_function() -> None:
    """A custom loop has no ``compile()``: XLA is asked for on its ``tf.function``."""
    root = Node(USER, "train_step", 0.001 * N, N, [_graph(0.009 * N)])
    tf = tf_record(wall_s=0.01, op_s=0.009)
    report = make_report(
        [root],
        N,
        cold=[],
        method="train_step",
        target="train.train_step",
        tf_profile=tf,
        iteration_s=(0.01,) * N,
    )
    lead = _lead(report, "compute-bound")
    assert "`@tf.function(jit_compile=True)` on your step" in lead.fix
    assert "compile()" not in lead.fix


def test_compute_bound_follows_a_steady_finding_and_does_not_say_wont_help() -> None:
    tf = tf_record(wall_s=0.01, op_s=0.009, input_wait_s=0.0005)
    convert = Node(TF + "framework/constant_op.py", "_constant_impl", 0.01 * N, N)
    report = _graph_step(tf, extra=(convert,))  # 50 % converting the input
    assert _ids(report)[:2] == ["conversion-overhead", "compute-bound"]
    compute = report.findings[1]
    assert "won't help" not in compute.fix
    assert compute.fix.startswith("Most of what is left is the model's own ops: after the fixes")


def test_compute_bound_does_not_say_wont_help_beside_a_minor_steady_finding() -> None:
    tf = tf_record(wall_s=0.01, op_s=0.009, input_wait_s=0.0005)
    convert = Node(TF + "framework/constant_op.py", "_constant_impl", 0.0013 * N, N)
    report = _graph_step(tf, extra=(convert,))  # ~12 % converting the input
    assert "conversion-overhead" in _ids(report)
    assert all("won't help" not in f.fix for f in report.findings)


def test_compute_bound_is_not_denied_by_a_traced_step_the_profiler_slowed() -> None:
    # The traced step took 20 ms (profiler and a busy machine), its ops 9 ms: 45 % of it.
    # The iterations no tracer slowed take 10 ms: the ops are 90 % of the program's step.
    tf = tf_record(wall_s=0.02, op_s=0.009, input_wait_s=0.0005)
    report = _graph_step(tf)
    assert report.timing.median_s == pytest.approx(0.01)
    lead = _lead(report, "compute-bound")
    assert lead.impact == pytest.approx(0.9, abs=0.01)
    assert "of 10.0 ms per unprofiled iteration (median) (90 %)" in lead.evidence[0]


def test_compute_bound_share_is_of_the_traced_step_when_the_plain_ones_are_slower() -> None:
    # Plain iterations slower than the traced one (noise): the traced wall is the basis.
    tf = tf_record(wall_s=0.008, op_s=0.0044, input_wait_s=0.0)
    lead = _lead(_graph_step(tf), "compute-bound")  # 55 % of 8 ms, not 44 % of 10 ms
    assert lead.impact == pytest.approx(0.55, abs=0.01)
    assert "of 8.0 ms per traced iteration" in lead.evidence[0]


@pytest.mark.parametrize(
    "tf",
    [
        tf_record(wall_s=0.01, op_s=0.0049, input_wait_s=0.0005),
        # Most op time is tf.data's, on its own threads: not the model's.
        tf_record(wall_s=0.01, op_s=0.012, input_op_s=0.008, input_wait_s=0.0005),
        # Or Python called from ops.
        tf_record(wall_s=0.01, op_s=0.009, py_funcs=PyFuncs(step_s=0.015, step_calls=3)),
        tf_record(wall_s=0.01, op_s=0.009, input_wait_s=0.002),
    ],
    ids=["ops-49%", "tf-data-ops", "python-ops", "input-wait-20%"],
)
def test_compute_bound_near_misses(tf: TfProfile) -> None:
    assert "compute-bound" not in _ids(_graph_step(tf))


# -- build-dominated -------------------------------------------------------------------------


def _cold_then_steady(
    cold_s: float, *, first_call_s: float, steady_s: float = 0.01, convert: float = 0.0
) -> Report:
    """A step whose cold call takes ``cold_s`` of profile (tracing), each later one
    ``steady_s`` (``convert`` of it converting the input); ``first_call_s`` is the cold
    call's own timing."""

    def step(calls: int, tracing_s: float) -> Node:
        converting = convert * steady_s * calls
        children = [
            _graph((1 - convert) * steady_s * calls, calls),
            Node(TF + "framework/constant_op.py", "_constant_impl", converting, calls),
            Node(TRACER, "_create_concrete_function", tracing_s, 1),
        ]
        return Node(USER, "step", 0.0, calls, children)

    return make_report(
        [step(N + 1, cold_s - steady_s)],
        N,
        cold=[step(1, cold_s - steady_s)],
        method="train_on_batch",
        first_call_s=first_call_s,
        iteration_s=(steady_s,) * N,
    )


def test_build_dominated_is_one_time_cost_and_ranks_after_steady_findings() -> None:
    report = _cold_then_steady(0.5, first_call_s=0.5, convert=0.5)
    assert _ids(report) == ["conversion-overhead", "build-dominated"]
    conversion, build = report.findings
    assert conversion.impact == pytest.approx(0.5, abs=0.01)
    # (0.5 − 0.01) of 0.55 s profiled: the larger impact, ranked last all the same
    assert build.impact == pytest.approx(0.49 / 0.55, abs=0.01)
    assert build.evidence == (
        "first call 0.500 s vs 0.0100 s per later call (50×)",
        "one-time cost (cold call minus one steady iteration): 0.490 s, 89 % of profiled time",
    )
    assert build.fix.startswith("This is a one-time cost, paid once per process")
    # 89 % of a profile whose length tfdiag chose: paid once, it informs (low), and ranks last
    assert (conversion.severity, build.severity) == ("high", "low")


def test_build_dominated_by_a_cold_call_ten_times_a_later_one() -> None:
    # one-time cost 0.02 of 0.08 s profiled (25 %), the first call 20× a later one
    found = _found(_cold_then_steady(0.03, first_call_s=0.2))
    assert found["build-dominated"].impact == pytest.approx(0.25, abs=0.01)
    assert found["build-dominated"].evidence[0].endswith("(20×)")


@pytest.mark.parametrize(
    ("cold_s", "first_call_s"),
    [(0.03, 0.09), (0.019, 0.2), (0.067, 0.03)],
    ids=["25%-9x", "15%-20x", "49%-3x"],
)
def test_build_dominated_near_misses(cold_s: float, first_call_s: float) -> None:
    assert "build-dominated" not in _ids(_cold_then_steady(cold_s, first_call_s=first_call_s))


# -- ranking ---------------------------------------------------------------------------------


def _spec(finding_id: str, impact: float, tier: str = "steady", **fixes: str) -> FindingSpec:
    def detect(ctx: Any) -> Detection:
        return Detection(impact, (f"{finding_id} measured",))

    return FindingSpec(
        finding_id, finding_id, detect, fixes={"other": f"fix {finding_id}", **fixes}, tier=tier
    )


def _ranked(*table: FindingSpec) -> list[str]:
    report = _converting(0.0)
    return [f.id for f in advise(report, analyze(report), table)]


def test_ranking_is_by_severity_then_tier_then_impact_and_severity_never_rises() -> None:
    table = (
        _spec("one-time", 0.9, "one-time"),
        _spec("minor", 0.12),
        _spec("conclusion", 0.8, "conclusion"),
        _spec("medium-conclusion", 0.2, "conclusion"),
        _spec("lead", 0.31),
        _spec("bigger", 0.5),
        _spec("smaller-one-time", 0.1, "one-time"),
        _spec("drift", 0.6, "timing"),
        _spec("spikes", 0.02, "timing"),
    )
    report = _converting(0.0)
    found = advise(report, analyze(report), table)
    order = [
        "bigger",  # high, a fix: the most it removes first
        "lead",
        "conclusion",  # high, what is left after the fixes
        "one-time",  # high, one-time
        "drift",  # high, a timing pattern: below every other high finding
        "minor",  # medium fix
        "medium-conclusion",
        "smaller-one-time",
        "spikes",  # low
    ]
    assert [f.id for f in found] == order
    ranks = [SEVERITIES.index(f.severity) for f in found]
    assert ranks == sorted(ranks)


def test_ranking_ties_keep_table_order_and_impacts_are_clamped() -> None:
    report = _converting(0.0)
    table = (_spec("a", 0.3), _spec("b", 0.3), _spec("over", 1.7), _spec("under", -0.2))
    found = advise(report, analyze(report), table)
    assert [f.id for f in found] == ["over", "a", "b", "under"]
    assert [f.impact for f in found] == [1.0, 0.3, 0.3, 0.0]
    assert [f.severity for f in found] == ["high", "high", "high", "low"]


def test_the_alone_fix_is_given_only_to_the_finding_that_leads() -> None:
    conclusion = _spec("conclusion", 0.8, "conclusion", alone="only this")
    report = _converting(0.0)
    alone = advise(report, analyze(report), (conclusion,))
    assert alone[0].fix == "only this"
    behind = advise(report, analyze(report), (conclusion, _spec("lead", 0.35)))
    assert [f.id for f in behind] == ["lead", "conclusion"]
    assert behind[1].fix == "fix conclusion"


def test_retrace_cause_needs_two_traces_that_differ() -> None:
    one = trace(1, (X,))
    assert retrace_cause([one]) is None
    assert retrace_cause([one, trace(2, (X,))]) is None


# -- no-known-cause ----------------------------------------------------------------------------


def test_a_run_no_finding_applies_to_says_where_the_time_went() -> None:
    """A graph step doing the work, a little Python around it: nothing crosses a threshold,
    and the report says so, with the split of the time, instead of staying empty."""
    own = Node(USER, "prepare", 0.02 * N, N)
    root = Node(USER, "step", 0.001 * N, N, [own, _graph(0.5 * N)])
    report = make_report([root], N, cold=[], method="step", target="train.step")
    lead = _lead(report, "no-known-cause")
    assert lead.severity == "low" and lead.impact == 0.0
    assert lead.evidence[0].startswith("the steady state, ")
    assert "op execution 96 %" in lead.evidence[0]
    assert lead.evidence[-1] == (
        "the heaviest function of your own below the call: `train.py:prepare`, 4 % (cumulative)"
    )
    assert lead.fix.startswith("None of tfdiag's findings applies")


def test_where_the_time_went_is_dropped_beside_a_real_finding() -> None:
    report = _predict_building_a_pipeline(0.4)
    assert "per-call-input-pipeline" in _ids(report)
    assert "no-known-cause" not in _ids(report)


def test_per_step_overhead_in_fit_without_a_batch_size_carries_no_placeholder() -> None:
    """``fit`` on a dataset (no ``batch_size=``): the fix has no "(the batch size now)"."""
    steps = 64 * N
    hook = Node(CALLBACK_LIST, "CallbackList.on_train_batch_begin", 1e-5 * N, steps)
    epoch = Node(CALLBACK_LIST, "CallbackList.on_epoch_begin", 1e-5 * N, N)
    step = Node(TRAINER, STEP_FUNCTION, 0.0, steps, [_graph(0.1 * N, steps)])
    # the trainer's own Python per step is the fixed cost (the hooks' would be callbacks')
    root = Node(TRAINER, "TensorFlowTrainer.fit", 0.4 * N, N, [hook, epoch, step])
    lead = _lead(make_report([root], N, cold=[], method="fit"), "per-step-overhead")
    assert "steps_per_execution=32" in lead.fix
    assert "now)" not in lead.fix and "{" not in lead.fix


@pytest.mark.parametrize(
    ("ops", "repeats", "unrolled"),
    [(1800, 240, True), (1800, 40, False), (400, 240, False)],
    ids=["unrolled-loop", "large-model-graph", "small-graph"],
)
def test_build_dominated_names_a_python_loop_unrolled_into_the_graph(
    ops: int, repeats: int, unrolled: bool
) -> None:
    """The cold call traced the user's function into a graph of ``ops`` ops, one of them
    repeated ``repeats``× in one scope: a Python ``range()`` loop unrolled (not a large
    model, whose ops are spread over its layers' scopes)."""
    report = _cold_then_steady(0.5, first_call_s=0.5)
    traced = dataclasses.replace(
        trace(0, (("x", tensor(64)),), function="simulate", line=3), ops=ops, repeats=repeats
    )
    report = dataclasses.replace(report, traces=(traced,))
    lead = _lead(report, "build-dominated")
    if unrolled:
        assert lead.evidence[-1] == (
            f"`simulate` (train.py:3) was traced into a graph of {ops} ops, one op repeated "
            f"{repeats}× in one scope: a Python loop (`for … in range(…)`) in a `tf.function` "
            "is unrolled, its body's ops copied into the graph once per step"
        )
        assert lead.fix.startswith(f"The one-time cost is tracing `simulate` into a graph of {ops}")
        assert "`for t in tf.range(n):`" in lead.fix
        assert lead.severity == "high"  # a fix removes this one-time cost: the bands hold
    else:
        assert lead.fix.startswith("This is a one-time cost, paid once per process")
        assert lead.severity == "low"


def _model_called_eagerly(**call: Any) -> Report:
    """A Keras model called directly per iteration: 200 eager ops under `Layer.__call__`."""
    ops = 200
    layer_call = Node(KERAS + "layers/layer.py", "Layer.__call__", 0.01 * N, N)
    layer_call.children = [Node("~", FAST_PATH, 20e-6 * ops * N, ops * N)]
    return make_report([layer_call], N, cold=[], method="__call__", **call)


def test_a_model_called_for_inference_eagerly_gets_the_inference_wrapper() -> None:
    lead = _lead(_model_called_eagerly(kwargs=(("training", "False"),)), "eager-execution")
    assert "training=False" in lead.fix


def test_a_model_called_with_training_true_is_a_training_step_not_inference() -> None:
    """A forward pass under a gradient tape (`tfdiag run` times `model(x, training=True)` as
    its site; the tape is outside the call): the fix is the training step's, never an
    inference wrapper with `training=False`."""
    lead = _lead(_model_called_eagerly(kwargs=(("training", "True"),)), "eager-execution")
    assert lead.fix.startswith("Decorate your train step with `@tf.function`")
    assert "training=False" not in lead.fix


def test_eager_ops_of_a_set_up_call_are_part_of_the_rebuild_and_follow_it() -> None:
    """`adapt()` every round dispatches its ops eagerly: adapting once removes them, so
    eager-execution is part of model-rebuilt-per-call, ranked right after it."""
    ops = 60
    adapt = Node(
        KERAS + "layers/preprocessing/text_vectorization.py", "TextVectorization.adapt", 0.0, N
    )
    adapt.children = [
        Node(
            TF + "ops/gen_math_ops.py",
            "mat_mul",
            0.05 * N,
            ops * N,
            [Node("~", FAST_PATH, 20e-6 * ops * N, ops * N)],
        )
    ]
    root = Node(USER, "score_round", 0.001 * N, N, [adapt, _graph(0.001 * N, N)], line=60)
    key = (adapt.file, adapt.line, adapt.name)
    place = LinePlace(USER, 65, (USER, 60, "score_round"), key, key, 90, 0.45)
    lines = LinesRecord(0.001, 90, (place,), ((USER, 65, "vectorizer.adapt(corpus)"),))
    report = make_report(
        [root], N, cold=[], method="score_round", target="app.score_round", lines=lines
    )
    ids = _ids(report)
    assert ids[:2] == ["model-rebuilt-per-call", "eager-execution"], ids
    eager = _found(report)["eager-execution"]
    assert "as `model-rebuilt-per-call` says" in eager.fix
    assert eager.line is not None and eager.line.line == 65  # the adapt line, not another
