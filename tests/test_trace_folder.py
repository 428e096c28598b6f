"""The profilers' temporary trace folder is removed by whatever stops a session between the
folder's making and the trace's reading: a failed start, a Ctrl-C as the folder is made, as
the options are built, as the profiler starts, a second Ctrl-C as it is stopped again, a
Ctrl-C as the trace is written (issue 32.15: 3 of 110 bursts of Ctrl-C left an empty
``tfdiag-trace-*``). On fake profilers: no TensorFlow, no JAX."""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tfdiag.capture import jax_profiler, tfprofiler
from tfdiag.records.errors import ProbeError


class _AlreadyExists(Exception):
    pass


def _fake_tf(where: str) -> Any:
    """A TensorFlow whose profiler raises KeyboardInterrupt at ``where``."""

    def press(at: str) -> None:
        if where == at:
            raise KeyboardInterrupt

    def options(**_: Any) -> object:
        press("options")
        return object()

    def start(logdir: str, options: object) -> None:
        press("start")
        if where == "start-then-stop":
            raise KeyboardInterrupt

    def stop(save: bool = True) -> None:
        if where == "start-then-stop" and not save:
            raise KeyboardInterrupt  # the burst's second press, as abort() stops it
        press("stop")
        if where == "stop-fails":
            raise RuntimeError("disk full")

    experimental = SimpleNamespace(
        ProfilerOptions=options, start=start, stop=stop, Trace=lambda *a, **k: _Step()
    )
    return SimpleNamespace(
        profiler=SimpleNamespace(experimental=experimental),
        errors=SimpleNamespace(AlreadyExistsError=_AlreadyExists),
    )


class _Step:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.fixture
def tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("where", ["options", "start", "start-then-stop"])
def test_a_ctrl_c_as_the_tf_profiler_starts_leaves_no_folder(tmp: Path, where: str) -> None:
    trace = tfprofiler.TfTrace(_fake_tf(where), None, None)
    with pytest.raises(KeyboardInterrupt):
        trace.begin()
    assert list(tmp.iterdir()) == []


def test_a_ctrl_c_as_the_folder_is_made_leaves_no_folder(
    tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Path.mkdir

    def made_then_pressed(self: Path, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "mkdir", made_then_pressed)
    with pytest.raises(KeyboardInterrupt):
        tfprofiler.TfTrace(_fake_tf("none"), None, None).begin()
    monkeypatch.undo()
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("where", "error"), [("stop", KeyboardInterrupt), ("stop-fails", ProbeError)]
)
def test_the_traced_pass_removes_its_folder_when_the_trace_is_not_written(
    tmp: Path, monkeypatch: pytest.MonkeyPatch, where: str, error: type[BaseException]
) -> None:
    fake = _fake_tf(where)
    monkeypatch.setattr(
        tfprofiler.TfTrace, "create", classmethod(lambda cls: cls(fake, None, None))
    )
    with pytest.raises(error):
        tfprofiler.traced_pass(len, ([1],), {}, 2)
    assert list(tmp.iterdir()) == []


def test_a_trace_that_starts_keeps_its_folder_until_it_is_read(tmp: Path) -> None:
    """The control: the folder exists while the session runs (the tests above can fail)."""
    trace = tfprofiler.TfTrace(_fake_tf("none"), None, None)
    trace.begin()
    assert [p.name[:13] for p in tmp.iterdir()] == ["tfdiag-trace-"]
    trace.stop()
    with pytest.raises(ProbeError, match="wrote no trace"):
        trace.read([0.1], 0.0)
    assert list(tmp.iterdir()) == []


class _FakeJaxProfiler:
    def __init__(self, where: str) -> None:
        self.where = where
        self.running = False

    def ProfileOptions(self) -> Any:  # noqa: N802 - jax.profiler's name
        if self.where == "options":
            raise KeyboardInterrupt
        return SimpleNamespace()

    def start_trace(self, logdir: str, profiler_options: Any) -> None:
        self.running = True
        if self.where in ("start", "start-then-stop"):
            raise KeyboardInterrupt

    def stop_trace(self) -> None:
        self.running = False
        if self.where == "start-then-stop":
            raise KeyboardInterrupt


@pytest.mark.parametrize("where", ["options", "start", "start-then-stop"])
def test_a_ctrl_c_as_the_jax_profiler_starts_leaves_no_folder(tmp: Path, where: str) -> None:
    with pytest.raises(KeyboardInterrupt):
        jax_profiler.JaxTrace(_FakeJaxProfiler(where)).begin()
    assert list(tmp.iterdir()) == []
