"""tfdiag.keras.ProfileCallback: driven by hand (no TF), and inside a real fit()."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tfdiag
from tfdiag.analysis.timeline import analyze_timeline
from tfdiag.capture.lock import PROFILER_LOCK
from tfdiag.keras import ProfileCallback
from tfdiag.records.errors import InputError
from tfdiag.results.report import Report

FLAVOURS = ["keras3", "tf_keras"]


class FakeModel:
    """What a CallbackList hands a callback: a model with a train_function."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.steps = 0
        self.fail_at = fail_at
        self.train_function = self._step

    def _step(self, iterator: object) -> int:
        self.steps += 1
        if self.steps == self.fail_at:
            raise RuntimeError("boom")
        return sum(range(200))


def drive(cb: ProfileCallback, model: FakeModel, batches: int) -> None:
    """What Keras' fit does with a callback, batch by batch."""
    cb.set_model(model)
    cb.set_params({"epochs": 1, "steps": batches, "verbose": 0})
    cb.on_train_begin()
    cb.on_epoch_begin(0)
    for b in range(batches):
        cb.on_train_batch_begin(b)
        model.train_function(None)
        cb.on_train_batch_end(b, {"loss": 0.0})
    cb.on_epoch_end(0, {})
    cb.on_train_end()


def steps_in(stats: Any) -> int:
    return sum(f.calls for f in stats.functions if f.name == "FakeModel._step")


def test_batches_are_checked() -> None:
    for bad in [(0, 5), (5, 5), (7, 3), 10, (1, 2, 3), (1.0, 4), (True, 4)]:
        with pytest.raises(InputError, match="batches"):
            ProfileCallback(batches=bad)  # type: ignore[arg-type]


def test_an_existing_save_path_is_refused_up_front(tmp_path: Path) -> None:
    (tmp_path / "run.prof").write_bytes(b"x")
    with pytest.raises(InputError, match="run.prof exists"):
        ProfileCallback(save=tmp_path / "run.tfdiag.json")
    ProfileCallback(save=tmp_path / "run.tfdiag.json", overwrite=True)


def test_hand_driven_fit_profiles_exactly_the_chosen_batches() -> None:
    cb = ProfileCallback(batches=(3, 8), tf_profiler=False)
    model = FakeModel()
    drive(cb, model, 20)
    report = cb.report
    assert isinstance(report, Report)
    assert (report.timing.iterations, report.timing.profiled_calls) == (5, 6)
    assert len(report.timing.profiled_iteration_s) == 5
    assert len(report.timing.iteration_s) == 14  # the 20 batches less the 6 profiled
    assert steps_in(report.profile) == 6 and steps_in(report.cold_profile) == 1
    assert report.call.method == "fit" and report.call.label == "FakeModel.fit"
    assert dict(report.call.kwargs) == {"batches": "3–8", "epochs": "1", "steps": "20"}
    assert not report.partial and report.source == "keras-callback"
    assert "the timeline is batches 1–2 and 9–20, timed with no profiler attached" in " ".join(
        report.notes
    )
    assert model.train_function == model._step  # the guard is gone
    assert sys.getprofile() is None


def test_the_callback_records_the_machines_load_per_timed_batch() -> None:
    """As profile() does: one load window per batch of the timeline, so a busy machine's
    spikes and drift are read as the machine's, not the program's."""
    cb = ProfileCallback(batches=(3, 8), tf_profiler=False)
    drive(cb, FakeModel(), 20)
    report = cb.report
    assert isinstance(report, Report) and report.machine is not None
    assert len(report.machine.per_iteration) == len(report.timing.iteration_s) == 14
    assert report.machine.cpus >= 1


def test_the_load_probe_runs_outside_the_profiled_batches() -> None:
    """The load probe's /proc read is tfdiag's bookkeeping: under cProfile it would be
    charged to the user's callbacks (the callback's batch hook calls it)."""
    cb = ProfileCallback(batches=(3, 8), tf_profiler=False)
    drive(cb, FakeModel(), 20)
    report = cb.report
    assert isinstance(report, Report)
    profiled = [f.name for f in report.profile.functions if "LoadProbe" in f.name]
    assert profiled == []


def test_a_raising_step_detaches_the_profiler_and_keeps_a_partial_report() -> None:
    cb = ProfileCallback(batches=(3, 8), tf_profiler=False)
    model = FakeModel(fail_at=6)
    with pytest.raises(RuntimeError, match="boom"):
        drive(cb, model, 20)
    assert sys.getprofile() is None
    assert model.train_function == model._step
    assert PROFILER_LOCK.try_acquire() is None  # released: the next profile can run
    PROFILER_LOCK.release()
    report = cb.report
    assert report is not None and report.partial
    assert report.timing.profiled_calls == 3  # batches 3, 4, 5 completed
    assert "fit raised RuntimeError at batch 6" in report.notes


def test_fit_ending_inside_the_range_reports_what_ran() -> None:
    cb = ProfileCallback(batches=(3, 8), tf_profiler=False)
    drive(cb, FakeModel(), 6)
    assert sys.getprofile() is None
    assert cb.report is not None and cb.report.partial
    assert cb.report.timing.profiled_calls == 4
    assert any("before batch 8" in n for n in cb.report.notes)


def test_fit_ending_before_the_range_warns_and_gives_no_report() -> None:
    cb = ProfileCallback(batches=(5, 8), tf_profiler=False)
    with pytest.warns(RuntimeWarning, match="no report for batches 5–8"):
        drive(cb, FakeModel(), 5)
    assert cb.report is None and sys.getprofile() is None


def test_a_running_profile_makes_the_callback_step_aside() -> None:
    cb = ProfileCallback(batches=(2, 4), tf_profiler=False)
    assert PROFILER_LOCK.try_acquire() is None
    try:
        with pytest.warns(RuntimeWarning, match="already running in this process"):
            drive(cb, FakeModel(), 6)
    finally:
        PROFILER_LOCK.release()
    assert cb.report is None


def test_the_callback_is_reusable_across_fits(tmp_path: Path) -> None:
    cb = ProfileCallback(batches=(2, 4), tf_profiler=False, save=tmp_path / "fit")
    drive(cb, FakeModel(), 5)
    first = cb.report
    with pytest.warns(RuntimeWarning, match="report not saved.*exists"):
        drive(cb, FakeModel(), 6)  # the second save would overwrite: warned, not raised
    assert cb.report is not None and cb.report is not first
    assert len(cb.report.timing.iteration_s) == 3
    assert (tmp_path / "fit.tfdiag.json").exists() and (tmp_path / "fit.prof").exists()


def test_a_step_left_wrapped_by_an_aborted_fit_is_unwrapped() -> None:
    model = FakeModel()
    aborted = ProfileCallback(batches=(2, 4), tf_profiler=False)
    aborted.set_model(model)
    aborted.on_train_begin()  # ... and another callback raised: no on_train_end
    assert model.train_function != model._step
    fresh = ProfileCallback(batches=(2, 4), tf_profiler=False)
    drive(fresh, model, 6)
    assert model.train_function == model._step
    assert steps_in(fresh.report.profile) == 3  # type: ignore[union-attr]


def test_unknown_hooks_are_no_ops_and_other_attributes_are_not() -> None:
    cb = ProfileCallback(tf_profiler=False)
    assert cb.on_predict_batch_end(0, {}) is None
    assert cb.on_some_future_hook() is None
    assert cb._implements_train_batch_hooks() and not cb._implements_test_batch_hooks()
    with pytest.raises(AttributeError):
        cb.not_a_hook  # noqa: B018


# -- real TensorFlow ------------------------------------------------------------------


def _data(batches: int) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32 * batches, 4)).astype("float32")
    return x, (x[:, :1] > 0).astype("float32")


@pytest.mark.tf
def test_a_profiled_range_that_reaches_the_fits_end_says_the_tf_profiler_traced_nothing(
    tiny_model_factory: Callable[[str], Any],
) -> None:
    """batches=(40, 150) on a fit of 144 batches: no batch was left for the TF profiler,
    the input wait went unmeasured and nothing said so (a cached-map program was called
    warm-up, never input-bound)."""
    model = tiny_model_factory("keras3")
    x, y = _data(12)
    cb = tfdiag.keras.ProfileCallback(batches=(4, 20), tf_profiler=True)
    model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[cb])
    report = cb.report
    assert report is not None
    assert report.probes is None or report.probes.tf_profile is None
    assert any(
        n.startswith("no batch ran after batch 12 for the TF profiler to trace")
        for n in report.notes
    ), report.notes


def _batch_end_calls(stats: Any) -> int:
    return sum(f.calls for f in stats.functions if f.name == "CallbackList.on_train_batch_end")


@pytest.mark.tf
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_callback_inside_a_real_fit(
    flavour: str, tiny_model_factory: Callable[[str], Any], tmp_path: Path
) -> None:
    model = tiny_model_factory(flavour)
    x, y = _data(12)
    cb = tfdiag.keras.ProfileCallback(batches=(10, 15), save=tmp_path / "fit")
    model.fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[cb])  # crosses an epoch
    report = cb.report
    assert report is not None and not report.partial
    assert report.call.flavour == flavour and report.call.method == "fit"
    assert (report.timing.iterations, report.timing.profiled_calls) == (5, 6)
    # batches 16–20 ran under the TF profiler and are not in the timeline (1–9, 21–24)
    assert len(report.timing.iteration_s) == 9 + 4
    assert report.probes is not None and report.probes.tf_profile is not None
    assert report.probes.tf_profile.steps == 5
    assert any("batches 16–20 ran under the TF profiler" in n for n in report.notes)
    # the timed probes' records, one machine-load window per timeline batch
    assert report.machine is not None and len(report.machine.per_iteration) == 13
    # cProfile saw each profiled batch's callback dispatch once, the cold table only the first
    assert _batch_end_calls(report.profile) == 6
    assert _batch_end_calls(report.cold_profile) == 1
    # batch 1 builds the train function: the timeline starts with a warm-up
    warmup = analyze_timeline(report.timing.iteration_s).warmup
    assert warmup is not None and warmup.times_s[0] == max(report.timing.iteration_s)
    assert "warmup" in [f.id for f in report.findings]
    assert sys.getprofile() is None
    assert "ProfileCallback" not in getattr(model.train_function, "__qualname__", "")
    assert (tmp_path / "fit.tfdiag.json").exists() and (tmp_path / "fit.prof").exists()


@pytest.mark.tf
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_fit_with_only_the_profile_callback_has_no_callback_overhead(
    flavour: str, tiny_model_factory: Callable[[str], Any]
) -> None:
    """docs/workflows.md's snippet: the only callback is tfdiag's, so no callback time is
    the user's (its load probe read from the batch hook was 7-12 % of a tiny step)."""
    model = tiny_model_factory(flavour)
    x, y = _data(12)
    cb = tfdiag.keras.ProfileCallback(batches=(4, 20), tf_profiler=False)
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[cb])
    report = cb.report
    assert report is not None
    assert "callback-overhead" not in [f.id for f in report.findings], [
        (f.id, f.evidence) for f in report.findings
    ]


@pytest.mark.tf
def test_callback_without_the_tf_profiler_times_every_other_batch(
    tiny_model_factory: Callable[[str], Any],
) -> None:
    model = tiny_model_factory("keras3")
    x, y = _data(12)
    cb = tfdiag.keras.ProfileCallback(batches=(10, 15), tf_profiler=False)
    model.fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[cb])
    report = cb.report
    assert report is not None and report.probes is None
    assert len(report.timing.iteration_s) == 24 - 6
    assert not any("TF profiler" in n for n in report.notes)


def _failing_model(flavour: str) -> Any:
    from tfdiag.measure.seed_models import keras_module

    keras = keras_module(flavour)

    class Boom(keras.layers.Layer):  # type: ignore[misc, name-defined]
        fail_at: int | None = None
        seen = 0

        def call(self, inputs: Any) -> Any:
            Boom.seen += 1
            if Boom.fail_at is not None and Boom.seen >= Boom.fail_at:
                raise RuntimeError("boom in batch")
            return inputs

    model = keras.Sequential([keras.layers.Input((4,)), Boom(), keras.layers.Dense(1)])
    model.compile("adam", "mse", run_eagerly=True)  # the layer runs in Python every batch
    return model, Boom


@pytest.mark.tf
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_fit_that_raises_mid_range_leaves_no_profiler(flavour: str) -> None:
    model, boom = _failing_model(flavour)
    x, y = _data(12)
    boom.fail_at = boom.seen + 6  # the 6th training batch raises
    cb = tfdiag.keras.ProfileCallback(batches=(4, 9))
    with pytest.raises(Exception, match="boom in batch"):
        model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[cb])
    assert sys.getprofile() is None
    report = cb.report
    assert report is not None and report.partial and report.timing.profiled_calls == 2
    assert any("fit raised" in n and "at batch 6" in n for n in report.notes)
    # the model trains again, with the same callback, once the fault is gone
    boom.fail_at = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[cb])
    assert cb.report is not None and cb.report.timing.profiled_calls == 6
    assert not cb.report.partial


def _registry_call() -> Any:
    from tensorflow.python.ops import script_ops

    return vars(script_ops.FuncRegistry)["__call__"]


@pytest.mark.tf
def test_fit_that_raises_in_the_traced_batches_stops_every_probe(tmp_path: Path) -> None:
    import tensorflow as tf

    model, boom = _failing_model("keras3")
    x, y = _data(12)
    hook = _registry_call()
    boom.fail_at = boom.seen + 11  # batch 11: the second one under the TF profiler
    cb = tfdiag.keras.ProfileCallback(batches=(4, 9))
    with pytest.raises(Exception, match="boom in batch"):
        model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[cb])
    assert sys.getprofile() is None and _registry_call() is hook
    report = cb.report
    assert report is not None and report.probes is None  # an incomplete trace is dropped
    assert any("fit raised" in n and "at batch 11" in n for n in report.notes)
    # no TF profiler session left running: a new one starts
    tf.profiler.experimental.start(str(tmp_path))
    tf.profiler.experimental.stop(save=False)


@pytest.mark.tf
def test_callback_times_the_python_that_the_pipeline_calls_back() -> None:
    import numpy as np
    import tensorflow as tf

    from tfdiag.measure.seed_models import tiny_model

    calls = {"n": 0}

    def scale(v: Any) -> Any:
        calls["n"] += 1
        return (v.numpy() * 2.0).astype("float32")

    x, y = _data(20)
    ds = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .map(lambda a, b: (tf.py_function(scale, [a], tf.float32), b))
        .map(lambda a, b: (tf.ensure_shape(a, (4,)), b))
        .batch(32)
    )
    model = tiny_model("keras3")
    hook = _registry_call()
    cb = tfdiag.keras.ProfileCallback(batches=(3, 6), tf_profiler=False)
    model.fit(ds, epochs=1, verbose=0, callbacks=[cb])
    assert _registry_call() is hook
    report = cb.report
    assert report is not None
    names = [c.function for c in report.py_callbacks]
    assert names and names[0].endswith("scale")
    # the hook counted the unprofiled batches' elements only, never the cProfile range's
    seen = report.py_callbacks[0].calls
    assert 0 < seen < calls["n"] and np.isfinite(report.py_callbacks[0].seconds)


class RunsOut(FakeModel):
    """A dataset of unknown length: the step raises StopIteration when it runs out, and Keras
    ends the epoch (on_train_end), as it does for TensorFlow's OutOfRangeError."""

    def _step(self, iterator: object) -> int:
        if self.steps == 12:
            raise StopIteration
        return super()._step(iterator)


def test_a_dataset_running_out_is_the_end_of_the_epoch_not_a_failure() -> None:
    cb = ProfileCallback(batches=(3, 8), tf_profiler=False)
    model = RunsOut()
    cb.set_model(model)
    cb.set_params({"epochs": 1, "steps": None, "verbose": 0})
    cb.on_train_begin()
    for b in range(20):
        cb.on_train_batch_begin(b)
        try:
            model.train_function(None)
        except StopIteration:
            break  # Keras' epoch iterator catches it and ends the epoch
        cb.on_train_batch_end(b, {"loss": 0.0})
    cb.on_train_end()
    report = cb.report
    assert report is not None and not report.partial
    assert "the dataset ran out at batch 13 (the epoch's end)" in report.notes
    assert not any("fit raised" in n for n in report.notes)


@pytest.mark.tf
def test_the_tf_profiler_record_survives_a_dataset_of_unknown_length(
    tiny_model_factory: Callable[[str], Any],
) -> None:
    """Keras ends the epoch when the dataset raises OutOfRangeError: the TF profiler's block
    traced before it is kept (it was dropped as a failed fit's)."""
    import tensorflow as tf

    model = tiny_model_factory("keras3")
    x, y = _data(12)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).filter(lambda *_: True).batch(32)
    cb = tfdiag.keras.ProfileCallback(batches=(2, 4))
    model.fit(ds, epochs=1, verbose=0, callbacks=[cb])
    report = cb.report
    assert report is not None
    assert report.probes is not None and report.probes.tf_profile is not None
    assert any("the dataset ran out" in n for n in report.notes)
