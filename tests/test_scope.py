"""Scoping a whole-program profile to its Keras calls (TF-free, synthetic profiles)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth import SITE, Node, build_stats

from tfdiag.analysis.scope import in_scope_shares, scope_to
from tfdiag.records.stats import ProfileStats
from tfdiag.results.load import report_from_stats

TRAINER = SITE + "keras/src/backend/tensorflow/trainer.py"
ADAPTER = SITE + "keras/src/trainers/data_adapters/array_data_adapter.py"
EXECUTE = SITE + "tensorflow/python/eager/execute.py"
BOOT = "<frozen importlib._bootstrap>"


def _script(loop_calls: int = 10) -> ProfileStats:
    """<module>: imports (6 s), model set-up (1 s, some of it the same op helper the
    calls use), then a loop of ``predict`` calls (2 s) that build a pipeline each."""
    imports = Node(BOOT, "_find_and_load", 0.5, 1, children=[
        Node("/venv/lib/python3.11/site-packages/tensorflow/__init__.py", "<module>", 5.5)
    ])  # fmt: skip
    setup = Node("/home/me/train.py", "build_model", 0.2, 1, children=[
        Node(EXECUTE, "quick_execute", 0.8, 4)
    ])  # fmt: skip
    predict = Node(TRAINER, "TensorFlowTrainer.predict", 0.1, loop_calls, children=[
        Node(ADAPTER, "ArrayDataAdapter.get_tf_dataset", 1.5, loop_calls),
        Node(EXECUTE, "quick_execute", 0.4, loop_calls),
    ])  # fmt: skip
    module = Node("/home/me/train.py", "<module>", 0.01, 1, children=[imports, setup, predict])
    return build_stats([module])


def test_scope_keeps_only_the_time_inside_the_calls() -> None:
    stats = _script()
    entry = next(i for i, f in enumerate(stats.functions) if f.name.endswith(".predict"))
    scoped = scope_to(stats, [entry])
    assert scoped.inside_s == pytest.approx(2.0)
    assert scoped.import_s == pytest.approx(6.0)
    assert scoped.outside_s == pytest.approx(stats.total_s - 2.0)
    names = {f.name: f for f in scoped.stats.functions}
    assert "build_model" not in names and "_find_and_load" not in names
    # a helper called from both the set-up and the calls keeps its share from the calls
    execute = names["quick_execute"]
    assert execute.self_s == pytest.approx(0.4, rel=1e-6) and execute.calls == 10
    assert not names["TensorFlowTrainer.predict"].callers  # the entry is a root


def test_time_that_loops_through_a_generator_stays_in_scope() -> None:
    # next() resumes a generator that calls next() again: a cycle in cProfile's edges
    fns = build_stats([
        Node(TRAINER, "TensorFlowTrainer.predict", 0.1, 5, children=[
            Node("~", "<built-in method builtins.next>", 0.1, 5, children=[
                Node(SITE + "keras/src/trainers/epoch_iterator.py", "_enumerate_iterator",
                     0.3, 5, children=[
                         Node("~", "<built-in method builtins.next>", 0.2, 5)]),
            ]),
        ]),
    ])  # fmt: skip
    shares = in_scope_shares(fns, [0])
    assert min(shares) == pytest.approx(1.0, abs=1e-4)


def test_explain_of_a_whole_script_profile_analyses_the_calls() -> None:
    whole = report_from_stats(_script(), name="run.prof", iterations=None)
    assert whole.profile.total_s == pytest.approx(2.0)
    assert any("left out: imports 6.0" in n for n in whole.notes), whole.notes
    assert whole.findings[0].id == "per-call-input-pipeline"
    assert whole.findings[0].impact == pytest.approx(0.75)  # 1.5 s of the 2 s
    unscoped = report_from_stats(_script(), name="run.prof", iterations=None, scope=False)
    assert unscoped.findings[0].impact < 0.6  # the one-time rest dilutes it


def _setup_work() -> int:
    total = 0
    for i in range(400_000):
        total += i * i
    return total


@pytest.mark.tf
def test_a_real_whole_program_profile_gives_the_verdict_of_the_calls(tmp_path: Path) -> None:
    import cProfile

    import numpy as np

    from tfdiag import load_report
    from tfdiag.measure.seed_models import tiny_model

    profiler = cProfile.Profile()
    profiler.enable()
    model = tiny_model("keras3")  # set-up: outside the calls
    x = np.zeros((32, 4), "float32")
    _setup_work()  # the script's own work, outside them too
    for _ in range(6):
        model.predict(x, verbose=0)
    profiler.disable()
    profiler.dump_stats(str(tmp_path / "run.prof"))
    report = load_report(tmp_path / "run.prof")
    assert report.timing.iterations == 5
    assert any(n.startswith("analysed: the ") for n in report.notes), report.notes
    predict = max(
        (
            f
            for f in report.profile.functions
            if f.name == "predict" and f.file.endswith("trainer.py")
        ),
        key=lambda f: f.cum_s,
    )
    assert report.profile.total_s == pytest.approx(predict.cum_s, rel=0.1)  # one caller level
    assert report.findings[0].id == "per-call-input-pipeline"
