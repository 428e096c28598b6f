"""The TF profiler probe: one traced pass, read offline with xprof (no TensorBoard server).

``tf.profiler.experimental.start`` writes an XSpace trace into a temporary logdir;
each iteration runs inside ``Trace("tfdiag-step", step_num=i, _r=1)`` so xprof
sees steps. After ``stop()`` the trace bytes are kept in memory (they are saved
beside the report by :meth:`Report.save`), xprof's ``framework_op_stats`` and
``overview_page`` tools are read by :mod:`tfdiag.analysis.oplevel`, and the temporary
logdir is removed. A profiler already running in the process is left alone.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfdiag.analysis.oplevel import XprofFormatError, events_per_step, tf_profile_from_tools
from tfdiag.records.clock import Clock
from tfdiag.records.errors import ProbeError
from tfdiag.records.probes import TfProfile

#: 1 = TraceMe "critical info": TF ops, tf.data iterators, tf.function graph building, all
#: that tfdiag reads; level 2 adds TF runtime events (executor, thread pools) that cost more.
HOST_TRACER_LEVEL = 1
STEP_NAME = "tfdiag-step"
GRAPH_BUILDING = "tf.function-graph_building"
TOOLS = ("framework_op_stats", "overview_page")

TraceFiles = tuple[tuple[str, bytes], ...]


def _import_xprof() -> Any:
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
        tf.profiler.experimental.stop(save=False)
    except Exception:  # never mask the user's exception
        pass


def _traced_calls(
    tf: Any, fn: Callable[..., Any], args: Any, kwargs: Any, n: int, logdir: str, clock: Clock
) -> tuple[list[float], float]:
    options = tf.profiler.experimental.ProfilerOptions(
        host_tracer_level=HOST_TRACER_LEVEL, python_tracer_level=0, device_tracer_level=1
    )
    try:
        tf.profiler.experimental.start(logdir, options=options)
    except tf.errors.AlreadyExistsError:
        raise ProbeError(
            "another TF profiler session is running in this process (yours?): it was left "
            "running and the TF profiler pass skipped"
        ) from None
    except Exception as exc:
        raise ProbeError(f"the TF profiler did not start ({type(exc).__name__}: {exc})") from None
    trace = tf.profiler.experimental.Trace
    times: list[float] = []
    try:
        for i in range(n):
            t0 = clock()
            with trace(STEP_NAME, step_num=i, _r=1):
                fn(*args, **kwargs)
            times.append(clock() - t0)
    except BaseException:
        _stop_quietly(tf)
        raise
    t0 = clock()
    try:
        tf.profiler.experimental.stop()
    except Exception as exc:
        raise ProbeError(f"the TF profiler could not write its trace ({exc})") from None
    return times, clock() - t0


def _graph_builds(files: TraceFiles) -> tuple[int, ...] | None:
    """``tf.function-graph_building`` events inside each traced step, from the XSpace."""
    try:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    except ImportError:
        return None
    steps: list[tuple[int, int]] = []
    builds: list[int] = []
    for _, data in files:
        space = xplane_pb2.XSpace()
        space.ParseFromString(data)
        for plane in space.planes:
            names = {k: v.name for k, v in plane.event_metadata.items()}
            for line in plane.lines:
                base = line.timestamp_ns * 1000
                for event in line.events:
                    name = names.get(event.metadata_id)
                    if name == STEP_NAME:
                        start = base + event.offset_ps
                        steps.append((start, start + event.duration_ps))
                    elif name == GRAPH_BUILDING:
                        builds.append(base + event.offset_ps)
    return events_per_step(sorted(steps), builds)


def _read(
    xprof: Any, logdir: Path, times: list[float], export_s: float
) -> tuple[TfProfile, TraceFiles]:
    paths = sorted(logdir.glob("plugins/profile/*/*.xplane.pb"))
    if not paths:
        raise ProbeError("the TF profiler wrote no trace")
    files = tuple((str(p.relative_to(logdir)), p.read_bytes()) for p in paths)
    docs = {}
    for tool in TOOLS:
        try:
            data, _ = xprof.xspace_to_tool_data([str(p) for p in paths], tool, {})
            docs[tool] = json.loads(data) if data else None
        except Exception as exc:
            raise ProbeError(f"xprof could not read the trace ({tool}: {exc})") from None
        if docs[tool] is None:
            raise ProbeError(f"xprof could not read the trace ({tool} is empty)")
    per_step = _graph_builds(files)
    try:
        record = tf_profile_from_tools(
            docs["framework_op_stats"],
            docs["overview_page"],
            iteration_s=times,
            graph_builds_per_step=per_step,
            host_tracer_level=HOST_TRACER_LEVEL,
            export_s=export_s,
        )
    except XprofFormatError as exc:
        raise ProbeError(f"xprof's output has an unexpected shape ({exc})") from None
    return record, files


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
    xprof = _import_xprof()
    try:
        import tensorflow as tf
    except ImportError:
        raise ProbeError("TensorFlow is not installed: TF profiler pass skipped") from None
    try:
        logdir = Path(tempfile.mkdtemp(prefix="tfdiag-trace-"))
    except OSError as exc:
        raise ProbeError(f"cannot create the trace folder ({exc.strerror or exc})") from None
    try:
        times, export_s = _traced_calls(tf, fn, args, kwargs, n, str(logdir), clock)
        return _read(xprof, logdir, times, export_s)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
