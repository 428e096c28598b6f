"""The capture session on fake probes (no TensorFlow): which probes attach on which
backend, their records by report field, and that each of the three drivers (profile(),
ProfileCallback, tfdiag run) attaches the probes of the one table around its profiled calls
and numbers those calls the same way."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fake_keras import FakeModel
from test_keras_callback import FakeModel as FakeFitModel
from test_keras_callback import drive

from tfdiag.capture import session as session_module
from tfdiag.capture.lock import PROFILER_LOCK, ProfilerLock
from tfdiag.capture.runner import profile_call
from tfdiag.capture.session import CaptureSession
from tfdiag.keras import ProfileCallback
from tfdiag.records.jit import JitCompile
from tfdiag.script import instrument
from tfdiag.script.instrument import run_script


class FakeProbe:
    """Records one JitCompile per call it saw while attached; attaches once ``ready``."""

    field = "jit_compiles"
    ready = True
    backends: tuple[str | None, ...] = (None, "tensorflow", "jax")

    def __init__(self) -> None:
        self.on = False
        self.call = 0
        self.events: list[JitCompile] = []
        self.attaches = 0

    def applies(self, backend: str | None) -> bool:
        return backend in self.backends

    @contextmanager
    def _hook(self) -> Iterator[bool]:
        if not type(self).ready:
            yield False
            return
        self.on, self.attaches = True, self.attaches + 1
        try:
            yield True
        finally:
            self.on = False

    def attach(self) -> Any:
        return self._hook()

    def set_call(self, i: int) -> None:
        self.call = i

    def seen(self) -> None:
        """The driven call ran: what the hook would record if attached."""
        if self.on:
            self.events.append(JitCompile(call=self.call, function="step"))

    def record(self, calls: int | None = None) -> tuple[JitCompile, ...]:
        return tuple(e for e in self.events if calls is None or 0 <= e.call < calls)

    def dropped_note(self) -> str | None:
        return "fake dropped" if self.events else None


class Loaded(FakeProbe):
    """A probe whose framework the cold call imports."""

    ready = False


@pytest.fixture()
def fake_probe(monkeypatch: pytest.MonkeyPatch) -> list[FakeProbe]:
    """The session's table is one fake probe; the made probes, in order."""
    made: list[FakeProbe] = []

    def make() -> FakeProbe:
        made.append(FakeProbe())
        return made[-1]

    monkeypatch.setattr(session_module, "PROBES", (make,))
    return made


def _backend(monkeypatch: pytest.MonkeyPatch, name: str | None) -> None:
    monkeypatch.setattr(session_module, "keras_backend", lambda: name)


def test_probes_attach_by_backend_and_report_by_field(monkeypatch: pytest.MonkeyPatch) -> None:
    class TfOnly(FakeProbe):
        field = "traces"
        backends = (None, "tensorflow")

    s = CaptureSession(probes=(TfOnly, FakeProbe))
    tf_probe, any_probe = s.probes
    assert isinstance(tf_probe, FakeProbe) and isinstance(any_probe, FakeProbe)
    _backend(monkeypatch, "jax")
    with s.attached() as complete:
        assert (tf_probe.on, any_probe.on) == (False, True)
        assert not complete  # the TF one may apply later (it does not on JAX)
        for i in range(3):
            s.set_call(i)
            tf_probe.seen()
            any_probe.seen()
    assert not any_probe.on  # detached after the block
    _backend(monkeypatch, "tensorflow")
    assert s.attach() is True and tf_probe.on
    s.detach()
    s.detach()  # twice: nothing
    assert not tf_probe.on
    records = s.records(2)
    assert set(records) == {"traces", "jit_compiles"}
    assert [e.call for e in records["jit_compiles"]] == [0, 1]
    assert records["traces"] == ()
    assert s.notes() == ["fake dropped"]


def test_a_probe_that_fails_to_attach_is_left_off_and_the_others_attach() -> None:
    class Broken(FakeProbe):
        def attach(self) -> Any:
            raise RuntimeError("hook moved")

    class Interrupting(FakeProbe):
        def attach(self) -> Any:
            raise KeyboardInterrupt

    s = CaptureSession(probes=(Broken, FakeProbe))
    broken, fine = s.probes
    assert isinstance(fine, FakeProbe)
    assert s.attach() is False and fine.on
    s.detach()
    assert not fine.on
    s = CaptureSession(probes=(FakeProbe, Interrupting))
    with pytest.raises(KeyboardInterrupt):
        s.attach()
    assert not any(p.on for p in s.probes if isinstance(p, FakeProbe))  # none left on


def test_the_lock_says_why_it_cannot_be_taken() -> None:
    lock = ProfilerLock()
    assert lock.try_acquire() is None
    assert lock.try_acquire() == "tfdiag.profile() is already running in this process"
    lock.release()
    sys.setprofile(lambda *a: None)
    try:
        assert "another profiler is attached" in (lock.try_acquire() or "")
    finally:
        sys.setprofile(None)
    assert lock.try_acquire() is None  # a refusal left it free
    lock.release()


def test_profile_attaches_the_table_and_again_when_the_cold_call_loads_a_framework(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[FakeProbe] = []

    def make() -> FakeProbe:
        made.append(Loaded())
        return made[-1]

    monkeypatch.setattr(session_module, "PROBES", (make,))
    monkeypatch.setattr(Loaded, "ready", False)

    def fn() -> None:
        Loaded.ready = True  # the cold call imports the framework
        made[0].seen()

    report = profile_call(fn, iterations=4, tf_profiler=False)
    probe = made[0]
    assert probe.attaches == 1  # on after the cold call, for the profiled ones
    assert [e.call for e in report.jit_compiles] == [1, 2, 3]
    assert "fake dropped" in report.notes
    assert PROFILER_LOCK.try_acquire() is None
    PROFILER_LOCK.release()


def test_the_callback_attaches_the_table_over_its_profiled_batches(
    fake_probe: list[FakeProbe],
) -> None:
    model = FakeFitModel()
    step = model.train_function

    def seen_step(iterator: object) -> int:
        for p in fake_probe:
            p.seen()
        return step(iterator)

    model._step = model.train_function = seen_step  # type: ignore[method-assign]
    cb = ProfileCallback(batches=(3, 6), tf_profiler=False)
    drive(cb, model, 10)
    assert cb.report is not None
    # batches 3–6 are calls 0–3; the batches before and after are not recorded
    assert [e.call for e in cb.report.jit_compiles] == [0, 1, 2, 3]
    assert not fake_probe[0].on


def test_run_attaches_the_table_around_each_profiled_call_of_a_site(
    fake_probe: list[FakeProbe], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    class Seen(FakeModel):
        def predict(self, *args: Any, **kwargs: Any) -> Any:
            for p in fake_probe:
                p.seen()
            return super().predict(*args, **kwargs)

    monkeypatch.setattr(instrument, "model_classes", lambda: [Seen])
    monkeypatch.setitem(sys.modules, "seen_model", type(sys)("seen_model"))
    sys.modules["seen_model"].Seen = Seen  # type: ignore[attr-defined]
    script = tmp_path / "s.py"
    script.write_text(
        textwrap.dedent(
            """
            from seen_model import Seen
            model = Seen()
            for _ in range(8):
                model.predict(1)
            """
        )
    )
    result = run_script(script, iterations=3, tf_profiler=False)
    (site,) = result.sites
    assert site.calls == 8 and site.report is not None
    # the first call and 3 more were profiled: calls 0–3, the timed ones not recorded
    assert [e.call for e in site.report.jit_compiles] == [0, 1, 2, 3]
    assert "fake dropped" in site.report.notes
    assert not any(p.on for p in fake_probe)
