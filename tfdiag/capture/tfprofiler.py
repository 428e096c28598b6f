"""The TF profiler probe: a block of traced steps, read offline with xprof (no TensorBoard).

``tf.profiler.experimental.start`` writes an XSpace trace into a temporary logdir;
each traced iteration runs inside ``Trace("tfdiag-step", step_num=i, _r=1)`` so xprof
sees steps. After ``stop()`` the trace bytes are kept in memory (they travel with the
report), xprof's ``framework_op_stats``, ``overview_page`` and
``input_pipeline_analyzer`` tools are read by :mod:`tfdiag.analysis.oplevel`, the
XSpace itself is scanned for graph builds and for where ``tf.py_function`` ops ran, and
the temporary logdir is removed. A profiler already running in the process is left
alone.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfdiag.analysis.xprof import (
    XLA_COMPILE_SUFFIX,
    XprofFormatError,
    events_per_step,
    is_py_func,
    tf_profile_from_tools,
    xla_compiles,
)
from tfdiag.capture.native_log import quiet
from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.probes import PyFuncs, TfProfile, XlaCompile
from tfdiag.records.scratch import scratch_path

#: 1 = TraceMe "critical info": TF ops, tf.data iterators, tf.function graph building, all
#: that tfdiag reads; level 2 adds TF runtime events (executor, thread pools) that cost more.
HOST_TRACER_LEVEL = 1
STEP_NAME = "tfdiag-step"
GRAPH_BUILDING = "tf.function-graph_building"
TOOLS = ("framework_op_stats", "overview_page", "input_pipeline_analyzer")
#: xprof caches its analysis (``ALL_HOSTS.op_stats_v2.pb``) in the logdir and serves it to
#: every later read unless told not to. The first tool of a trace is read fresh (a second
#: trace in the same folder must not get the first one's tables), which writes the cache;
#: the other tools reuse it (about 0.1 s instead of 0.5 s for the three, benchmarks/
#: diagnosis_cost.py's fixed cost).
XPROF_OPTIONS = {"use_saved_result": False}
XPROF_CACHED = {"use_saved_result": True}

TraceFiles = tuple[tuple[str, bytes], ...]


def import_xprof() -> Any:
    try:
        from xprof.convert import raw_to_tool_data
    except ImportError:
        raise ProbeError(
            "xprof is not installed (pip install tensorboard-plugin-profile): "
            "TF profiler pass skipped"
        ) from None
    return raw_to_tool_data


def _stop_quietly(tf: Any) -> None:
    try:
        with quiet():
            tf.profiler.experimental.stop(save=False)
    except Exception:  # never mask the user's exception
        pass


class TfTrace:
    """One TF profiler session over a block of steps: ``start()`` (or ``create()``, then
    ``begin()`` inside the block), ``step(i)`` around each traced call, ``stop()``, then
    ``read()``; ``abort()`` if the block raises."""

    def __init__(self, tf: Any, xprof: Any, logdir: Path | None) -> None:
        self.tf, self.xprof, self.logdir = tf, xprof, logdir
        self.running = False

    @classmethod
    def start(cls) -> TfTrace:
        """A session started in a new temporary logdir (:meth:`create`, then :meth:`begin`;
        a Ctrl-C in between stops it and removes the logdir).

        Raises:
            ProbeError: as :meth:`create` and :meth:`begin`.
        """
        trace = cls.create()
        trace.begin()
        return trace

    @classmethod
    def create(cls) -> TfTrace:
        """A session not yet started: nothing to stop or remove yet.

        Raises:
            ProbeError: xprof or TensorFlow is missing.
        """
        with quiet():  # native log lines kept (:mod:`tfdiag.capture.native_log`)
            xprof = import_xprof()
            try:
                import tensorflow as tf
            except ImportError:
                raise ProbeError("TensorFlow is not installed: TF profiler pass skipped") from None
        return cls(tf, xprof, None)

    def begin(self) -> None:
        """Make the logdir and start the session. Call it inside the block that calls
        :meth:`abort`. Whatever stops it once the folder's name is chosen (a failed start,
        a Ctrl-C as the folder is made, as the options are built, as the profiler starts,
        or a second one as it is stopped again) removes the folder before it propagates.

        Raises:
            ProbeError: another profiler session is running, or the profiler does not start
                or its folder cannot be made.
        """
        tf = self.tf
        self.logdir = scratch_path("trace")
        try:
            self._start(tf)
        except BaseException:
            self.abort()
            raise

    def _start(self, tf: Any) -> None:
        assert self.logdir is not None
        try:
            self.logdir.mkdir(mode=0o700)
        except OSError as exc:
            self.logdir = None
            raise ProbeError(f"cannot create the trace folder ({exc.strerror or exc})") from None
        options = tf.profiler.experimental.ProfilerOptions(
            host_tracer_level=HOST_TRACER_LEVEL, python_tracer_level=0, device_tracer_level=1
        )
        self.running = True  # from here a Ctrl-C stops the session, started or about to be
        try:
            with quiet():
                tf.profiler.experimental.start(str(self.logdir), options=options)
        except tf.errors.AlreadyExistsError:
            self.running = False  # someone else's session: never stopped by us
            raise ProbeError(
                "another TF profiler session is running in this process (yours?): it was left "
                "running and the TF profiler pass skipped"
            ) from None
        except Exception as exc:
            self.running = False
            raise ProbeError(
                f"the TF profiler did not start ({type(exc).__name__}: {exc})"
            ) from None

    def step(self, i: int) -> AbstractContextManager[Any]:
        return self.tf.profiler.experimental.Trace(STEP_NAME, step_num=i, _r=1)  # type: ignore[no-any-return]

    def stop(self, clock: Clock = time.perf_counter) -> float:
        """End the session and write the trace; returns how long that took.

        Raises:
            ProbeError: the trace could not be written.
        """
        t0 = clock()
        self.running = False
        try:
            with quiet():
                self.tf.profiler.experimental.stop()
        except Exception as exc:
            self.cleanup()  # a trace that was not written is never read
            raise ProbeError(f"the TF profiler could not write its trace ({exc})") from None
        except BaseException:
            self.cleanup()  # a Ctrl-C as it writes: never read either
            raise
        return clock() - t0

    def abort(self) -> None:
        """Stop a session still running and remove the folder, even when a second Ctrl-C
        lands as the session stops."""
        try:
            if self.running:
                self.running = False
                _stop_quietly(self.tf)
        finally:
            self.cleanup()

    def cleanup(self) -> None:
        if self.logdir is not None:
            shutil.rmtree(self.logdir, ignore_errors=True)

    def read(self, times: Sequence[float], export_s: float) -> tuple[TfProfile, TraceFiles]:
        """The record of the traced steps, and the trace files; removes the logdir.

        Raises:
            ProbeError: no trace was written, or xprof could not read it.
        """
        if self.logdir is None:
            raise ProbeError("the TF profiler never started")
        try:
            return _read(self.xprof, self.logdir, times, export_s)
        finally:
            self.cleanup()


def _xspaces(files: TraceFiles) -> Iterator[Any]:
    try:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    except ImportError:
        return
    for _, data in files:
        space = xplane_pb2.XSpace()
        space.ParseFromString(data)
        yield space


@dataclass(frozen=True)
class TraceScan:
    graph_builds_per_step: tuple[int, ...] | None
    py_funcs: PyFuncs | None
    xla_compiles: tuple[XlaCompile, ...] = ()


def _stat_text(plane: Any, event: Any, name: str) -> str:
    """An event's string stat ``name`` (a value or a reference to one), or ``""``."""
    for stat in event.stats:
        meta = plane.stat_metadata.get(stat.metadata_id)
        if meta is not None and meta.name == name:
            if stat.str_value:
                return str(stat.str_value)
            ref = plane.stat_metadata.get(stat.ref_value)
            return str(ref.name) if ref is not None else ""
    return ""


def scan_trace(files: TraceFiles) -> TraceScan:
    """What the XSpace itself tells beyond xprof's tables: graph builds inside each traced
    step, and where ``tf.py_function`` ops ran: on tf.data's threads (``tf_data_*`` lines,
    or inside an iterator's event) or in the steps' own graphs and ops."""
    steps: list[tuple[int, int]] = []
    builds: list[int] = []
    seconds = {"pipeline": 0.0, "step": 0.0}
    counts = {"pipeline": 0, "step": 0}
    compiles: list[tuple[str, int, int]] = []
    seen = False
    for space in _xspaces(files):
        seen = True
        for plane in space.planes:
            names = {k: v.name for k, v in plane.event_metadata.items()}
            for line in plane.lines:
                base = line.timestamp_ns * 1000
                iterators: list[tuple[int, int]] = []
                calls: list[tuple[int, int]] = []
                for event in line.events:
                    name = names.get(event.metadata_id, "")
                    start = base + event.offset_ps
                    if name == STEP_NAME:
                        steps.append((start, start + event.duration_ps))
                    elif name == GRAPH_BUILDING:
                        builds.append(start)
                    elif name.endswith(XLA_COMPILE_SUFFIX):
                        module = _stat_text(plane, event, "name") or "?"
                        compiles.append((module, start, event.duration_ps))
                    elif name.startswith("Iterator::"):
                        iterators.append((start, start + event.duration_ps))
                    elif is_py_func(name.split(":")[-1]):
                        calls.append((start, event.duration_ps))
                tf_data = line.name.startswith("tf_data")
                for start, duration in calls:
                    inside = tf_data or any(a <= start <= b for a, b in iterators)
                    key = "pipeline" if inside else "step"
                    seconds[key] += duration * 1e-12
                    counts[key] += 1
    if not seen:
        return TraceScan(None, None)
    funcs = PyFuncs(seconds["pipeline"], counts["pipeline"], seconds["step"], counts["step"])
    ordered = sorted(steps)
    return TraceScan(events_per_step(ordered, builds), funcs, xla_compiles(compiles, ordered))


def _read(
    xprof: Any, logdir: Path, times: Sequence[float], export_s: float
) -> tuple[TfProfile, TraceFiles]:
    paths = sorted(logdir.glob("plugins/profile/*/*.xplane.pb"))
    if not paths:
        raise ProbeError("the TF profiler wrote no trace")
    files = tuple((str(p.relative_to(logdir)), p.read_bytes()) for p in paths)
    return read_tools(xprof, paths, times, export_s, scan_trace(files)), files


def _tool_docs(xprof: Any, paths: Sequence[Path]) -> dict[str, Any]:
    docs = {}
    for n, tool in enumerate(TOOLS):
        options = XPROF_CACHED if n else XPROF_OPTIONS
        try:
            data, _ = xprof.xspace_to_tool_data([str(p) for p in paths], tool, options)
            docs[tool] = json.loads(data) if data else None
        except Exception as exc:
            raise ProbeError(f"xprof could not read the trace ({tool}: {exc})") from None
        if docs[tool] is None and tool != "input_pipeline_analyzer":
            raise ProbeError(f"xprof could not read the trace ({tool} is empty)")
    return docs


def read_tools(
    xprof: Any, paths: Sequence[Path], times: Sequence[float], export_s: float, scan: TraceScan
) -> TfProfile:
    """xprof's tools on the trace files ``paths``, read into one record.

    Raises:
        ProbeError: xprof could not read them, or its output has an unexpected shape.
    """
    with quiet():  # xprof logs 30-40 native lines per trace read
        docs = _tool_docs(xprof, paths)
    try:
        return tf_profile_from_tools(
            docs["framework_op_stats"],
            docs["overview_page"],
            input_doc=docs["input_pipeline_analyzer"],
            iteration_s=times,
            graph_builds_per_step=scan.graph_builds_per_step,
            py_funcs=scan.py_funcs,
            xla_compiles=scan.xla_compiles,
            host_tracer_level=HOST_TRACER_LEVEL,
            export_s=export_s,
        )
    except XprofFormatError as exc:
        raise ProbeError(f"xprof's output has an unexpected shape ({exc})") from None


def traced_pass(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    n: int,
    *,
    clock: Clock = time.perf_counter,
) -> tuple[TfProfile, TraceFiles]:
    """Run ``fn`` ``n`` times under the TF profiler; return the record and the trace files.

    Raises:
        ProbeError: xprof or TensorFlow is missing, another profiler is running, or the
            trace could not be written or read; the profiler is stopped either way.
        Exception: whatever ``fn`` raises, with the profiler stopped.
    """
    from tfdiag.capture.sampling import _calls

    trace = TfTrace.create()
    times: list[float] = []
    try:  # from the folder's making to the trace's reading, whatever stops it removes it
        trace.begin()
        _calls(fn, args, kwargs, n, times, clock, step=trace.step)
        export_s = trace.stop(clock)
        return trace.read(times, export_s)
    except BaseException:
        trace.abort()
        raise
