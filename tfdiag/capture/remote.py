"""``tfdiag capture``: trace the workers of a running job through their TF profiler servers.

Each worker runs ``tf.profiler.experimental.server.start(port)``; this client asks every
server at once for ``duration_ms`` of trace (``tf.profiler.experimental.client.trace``,
TensorFlow's own remote capture), then reads each worker's XSpace offline with xprof into
one op-level report, and merges them. The steps are tf_keras' own ``train`` markers around
each batch (``train_function`` inside them), or tfdiag's ``tfdiag-step``; Keras 3 marks no
steps, so a Keras 3 job captured this way has none.

Before the trace each address is checked with a plain TCP connect: TensorFlow's client
waits on a refusing address and then drops it from the trace without an error.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfdiag.analysis.xprof import step_cycles
from tfdiag.capture.native_log import quiet
from tfdiag.capture.tfprofiler import (
    STEP_NAME,
    TraceFiles,
    import_xprof,
    read_tools,
    scan_trace,
)
from tfdiag.records.clock import now_iso
from tfdiag.records.distributed import Distribution
from tfdiag.records.errors import InputError, ProbeError
from tfdiag.records.files import Content, write_set
from tfdiag.records.probes import Probes
from tfdiag.records.report import REPORT_SUFFIX, CallInfo, Environment, Timing, report_paths
from tfdiag.records.scratch import make_scratch
from tfdiag.records.stats import ProfileStats
from tfdiag.results.job import JobResult, merge_records
from tfdiag.results.report import Report

#: The longest trace asked for (10 minutes).
MAX_DURATION_MS = 600_000
#: How long past the duration asked for a trace may take to come back before it is given
#: up: a listener that is not a profiler server made TensorFlow's client wait ~75 s.
TRACE_MARGIN_S = 20.0
#: How long the trace's child process may take to import TensorFlow.
CLIENT_START_S = 180.0
#: tf_keras' marker around each batch of a fit, and the step function inside it.
KERAS_STEP, KERAS_FN = "train", "train_function"
_ADDRESS = re.compile(r"^(?:grpc://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.\-]+):(\d{1,5})$")


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"grpc://{self.host}:{self.port}"

    @property
    def file_stem(self) -> str:
        """How the TF profiler names this worker's trace file (``127.0.0.1_6009``)."""
        return f"{self.host.strip('[]')}_{self.port}"


def parse_addresses(text: str) -> tuple[Address, ...]:
    """``grpc://h:p,grpc://h:p`` → addresses, in order (the worker index is the position).

    Raises:
        InputError: an empty list, a malformed address or port, or one given twice.
    """
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or not all(parts):
        raise InputError(f"give the workers' profiler addresses, comma-separated: {text!r}")
    out = []
    for part in parts:
        m = _ADDRESS.match(part)
        port = int(m.group(2)) if m else 0
        if m is None or not 1 <= port <= 65535:
            raise InputError(f"{part!r} is not a profiler address (grpc://HOST:PORT)")
        out.append(Address(m.group(1), port))
    seen: set[tuple[str, int]] = set()
    for a in out:
        endpoints = _endpoints(a)
        if endpoints & seen:  # 127.0.0.1:P and 127.1:P, localhost:P: one server
            raise InputError(f"an address is given twice in {text!r}: one per worker")
        seen |= endpoints
    return tuple(out)


def _endpoints(a: Address) -> set[tuple[str, int]]:
    """Where ``a`` connects: its resolved (IP, port) pairs, or its spelling if it does not
    resolve (the reachability check then says so)."""
    host = a.host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, a.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return {(host.lower(), a.port)}
    return {(str(info[4][0]), a.port) for info in infos}


def check_reachable(addresses: Sequence[Address], timeout_s: float = 2.0) -> None:
    """Raises InputError for the first address nothing listens on."""
    for a in addresses:
        try:
            with socket.create_connection((a.host.strip("[]"), a.port), timeout=timeout_s):
                pass
        except OSError as exc:
            raise InputError(
                f"cannot reach {a.url} ({exc.strerror or exc}): is "
                f"tf.profiler.experimental.server.start({a.port}) running in that worker?"
            ) from None


#: A native log line (absl's format) or absl's preamble, in the client's log.
_NATIVE = re.compile(r"[IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] |WARNING: All log messages before ")


class _Client:
    """TensorFlow's profiler client, in a child process (:mod:`tfdiag.capture.trace_client`)
    that is killed once the trace is :data:`TRACE_MARGIN_S` past the duration asked for,
    counted from when TensorFlow has loaded in it. It runs while this process loads xprof."""

    def __init__(self, addresses: Sequence[Address], logdir: Path, duration_ms: int) -> None:
        self.urls = ",".join(a.url for a in addresses)
        self.duration_ms = duration_ms
        self.error = logdir / "tfdiag-trace-error.txt"
        self.log = logdir / "tfdiag-trace-log.txt"  # its stdout and stderr: tfdiag's own lines
        self.started = time.monotonic()
        self._ready, ready_w = os.pipe()
        root = str(Path(__file__).resolve().parents[2])  # where this tfdiag is imported from
        path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
        try:
            with self.log.open("wb") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "tfdiag.capture.trace_client", self.urls,
                     str(logdir), str(duration_ms), str(ready_w), str(self.error)],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(ready_w,),
                    env={**os.environ, "PYTHONPATH": path},
                )  # fmt: skip
        except BaseException:
            os.close(self._ready)
            raise
        finally:
            os.close(ready_w)

    def wait(self) -> None:
        """Raises InputError: the trace failed, or did not come back within its bound."""
        try:
            code = self._wait()
        finally:
            self.kill()
        if code != 0:
            try:
                why = self.error.read_text(encoding="utf-8", errors="replace")
            except OSError:
                why = f"the client exited with {code}{self._last_words()}"
            raise InputError(f"the trace of {self.urls} failed ({why}); is the job training?")

    def _wait(self) -> int:
        left = self.started + CLIENT_START_S - time.monotonic()
        readable, _, _ = select.select([self._ready], [], [], max(left, 0))
        ready = os.read(self._ready, 64) if readable else b""
        try:
            loaded = float(ready)  # the child's monotonic clock (the system's) when ready
        except ValueError:
            code = self.proc.poll()
            if code is not None and code != 0:
                return code  # it failed before it could trace
            raise InputError(
                f"the trace of {self.urls} failed: TensorFlow's profiler client did not start "
                f"within {CLIENT_START_S:g} s"
            ) from None
        bound = self.duration_ms / 1000 + TRACE_MARGIN_S
        try:
            return self.proc.wait(timeout=max(loaded + bound - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            raise InputError(
                f"no trace came back from {self.urls} within {bound:g} s ({self.duration_ms} "
                f"ms asked for + {TRACE_MARGIN_S:g} s): is each address a TF profiler server "
                "(tf.profiler.experimental.server.start) of a worker that is training?"
            ) from None

    def _last_words(self) -> str:
        """The last line of the client's log that is no native log line (a crash's)."""
        try:
            lines = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        said = [line for line in lines if line.strip() and not _NATIVE.match(line)]
        return f": {' '.join(said[-1].split())[:300]}" if said else ""

    def kill(self) -> None:
        if self._ready >= 0:
            os.close(self._ready)
            self._ready = -1
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _events(data: bytes, names: tuple[str, ...]) -> dict[str, list[tuple[int, int]]]:
    """``(start, duration)`` in picoseconds of every event named in ``names``."""
    with quiet():
        from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(data)
    found: dict[str, list[tuple[int, int]]] = {n: [] for n in names}
    for plane in space.planes:
        ids = {k: v.name for k, v in plane.event_metadata.items() if v.name in found}
        for line in plane.lines:
            base = line.timestamp_ns * 1000
            for event in line.events:
                name = ids.get(event.metadata_id)
                if name is not None:
                    found[name].append((base + event.offset_ps, event.duration_ps))
    return found


def _worker_report(
    xprof: Any, a: Address, index: int, addresses: Sequence[Address], path: Path, logdir: Path
) -> Report:
    data = path.read_bytes()
    events = _events(data, (KERAS_STEP, KERAS_FN, STEP_NAME))
    steps, inner = events[KERAS_STEP], events[KERAS_FN]
    if not steps:
        steps, inner = events[STEP_NAME], []
    cycle_s, fn_s = step_cycles(steps, inner)
    if len(cycle_s) < 2:
        raise InputError(
            f"{a.url}: the trace holds {len(steps)} step(s), too few to time "
            "(is the job training? tf_keras marks its fit steps; Keras 3 marks none)"
        )
    files: TraceFiles = ((str(path.relative_to(logdir)), data),)
    iteration_s = tuple(d * 1e-12 for _, d in sorted(steps))
    try:
        record = read_tools(xprof, [path], iteration_s, 0.0, scan_trace(files))
    except ProbeError as exc:
        raise InputError(f"{a.url}: {exc}") from None
    cluster = (("worker", tuple(f"{x.host}:{x.port}" for x in addresses)),)
    return Report(
        call=CallInfo(label=f"remote capture of {a.url}", method="fit"),
        environment=Environment(),
        timing=Timing(
            iterations=len(iteration_s), profiled_calls=len(iteration_s), iteration_s=iteration_s
        ),
        profile=ProfileStats(()),
        notes=(
            f"remote capture: {len(steps)} steps traced by the TF profiler server at {a.url}; "
            "no Python profile (cProfile) of this worker",
        ),
        created=now_iso(),
        source="remote-capture",
        probes=Probes(tf_profile=record, trace_files=files),
        distribution=Distribution(
            strategy="",
            task_type="worker",
            task_index=index,
            cluster=cluster,
            num_replicas=len(addresses),
            cycle_s=cycle_s,
            step_fn_s=fn_s,
            source="remote-capture",
            address=a.url,
        ),
    )


def capture(
    addresses: Sequence[Address], *, duration_ms: int
) -> tuple[JobResult, tuple[Report, ...]]:
    """Trace every worker for ``duration_ms``; the merged view and each worker's report.

    Raises:
        InputError: an address nothing listens on, a trace that failed or came back without
            a worker, a worker's trace with too few steps.
    """
    if not 1 <= duration_ms <= MAX_DURATION_MS:
        raise InputError(f"--duration-ms must be 1 to {MAX_DURATION_MS:,}, got {duration_ms}")
    check_reachable(addresses)
    logdir = make_scratch("capture")
    try:
        client = _Client(addresses, logdir, duration_ms)
        try:
            with quiet():  # it loads TensorFlow: its native lines kept
                xprof = import_xprof()  # while the client loads TensorFlow and traces
        except BaseException:
            client.kill()
            raise
        client.wait()
        found = {p.name: p for p in logdir.glob("plugins/profile/*/*.xplane.pb")}
        reports = []
        for i, a in enumerate(addresses):
            path = found.get(f"{a.file_stem}.xplane.pb")
            if path is None:
                raise InputError(f"{a.url}: no trace came back from this worker")
            reports.append(_worker_report(xprof, a, i, addresses, path, logdir))
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    merged = merge_records(
        [(r, a.url) for r, a in zip(reports, addresses)],
        notes=(f"remote capture of {len(addresses)} worker(s) for {duration_ms} ms",),
    )
    return merged, tuple(reports)


def capture_paths(stem: str | Path, workers: int) -> tuple[Path, tuple[Path, ...]]:
    """``job`` → the merged view ``job.tfdiag.json`` and each worker's ``job.w<i>.tfdiag.json``."""
    merged = report_paths(stem)[0]
    base = merged.name[: -len(REPORT_SUFFIX)] if merged.name.endswith(REPORT_SUFFIX) else stem
    return merged, tuple(merged.with_name(f"{base}.w{i}{REPORT_SUFFIX}") for i in range(workers))


def save_capture(
    merged: JobResult, reports: Sequence[Report], stem: str | Path, *, overwrite: bool = False
) -> tuple[Path, ...]:
    """Write the merged view and every worker's report (its ``.prof`` and trace folder
    beside it) as one set: all of them, or none.

    Raises:
        InputError: a target exists (without ``overwrite``) or is a folder.
    """
    merged_path, worker_paths = capture_paths(stem, len(reports))
    files: dict[Path, Content] = dict(merged._default_files(merged_path))
    for report, path in zip(reports, worker_paths):
        files.update(report._default_files(path))
    write_set(files, overwrite=overwrite)
    return tuple(files)
