"""``tfdiag tensorboard``: the run's TF profiler trace in TensorBoard, bound to 127.0.0.1 only.

TensorBoard runs in this process (it ends with tfdiag), reads only the report's logdir,
and answers only requests whose ``Host`` is 127.0.0.1 or localhost; the profile plugin's
capture endpoint (which would make the server connect to an address given in the URL) is
refused: this command views a saved trace, it captures nothing.

It takes the report or its logdir (``run.tfdiag.json`` or ``run.tfprofile``) and serves a
temporary copy of the logdir, so the cache files xprof writes beside a trace
(``.cached_tools.json``, ``*.op_stats_v2.pb``, ...) never change the saved set. The copy
(``tfdiag-tensorboard-<pid>-*`` in the temporary folder) goes when the command ends, on
Ctrl-C, SIGTERM or SIGHUP (a closed terminal) too; one left by a process that was killed
outright (``kill -9``) is removed by the next ``tfdiag tensorboard``. stderr keeps
what a user needs: xprof's per-request JSON lines, its INFO lines, the tracebacks it logs
while looking for a cache that is not there yet, and TensorBoard's warnings about its own
page headers are left out (:class:`_Quiet`, :func:`_quiet_logs`), and the native log lines
of TensorFlow's import and of xprof reading the trace are kept off it (the whole serve is
one window of :mod:`tfdiag.capture.native_log`).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import logging
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from tfdiag.capture.native_log import quiet
from tfdiag.frontends.commands._common import port
from tfdiag.records.errors import InputError
from tfdiag.records.scratch import prefix, sweep_stale

#: The largest logdir tfdiag hands to TensorBoard.
MAX_LOGDIR_BYTES = 4 * 2**30
#: Paths TensorBoard serves that this command refuses: capturing a new profile.
REFUSED_SUFFIXES = ("/capture_profile",)


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "tensorboard",
        help="open the run's TF profiler trace in TensorBoard's Profile tab (127.0.0.1 only)",
        epilog="example: python -m tfdiag tensorboard run.tfdiag.json --port 6006",
    )
    p.add_argument(
        "path",
        help="a .tfdiag.json report saved from profile(..., tf_profiler=True), or its "
        ".tfprofile logdir",
    )
    p.add_argument(
        "--port",
        type=port,
        default=6006,
        help="the port on 127.0.0.1 to serve on (default 6006)",
    )
    p.set_defaults(func=run)


def logdir_for(path: Path) -> Path:
    """The saved logdir beside the report, checked before TensorBoard starts: plain files
    only (no FIFO, device or link that would hang or flood its reader), and the very
    trace saved with this report when the report recorded one."""
    from tfdiag.render.artefacts import artefact_paths
    from tfdiag.results.load import load_report, saved_files

    report = load_report(path)  # checks size and shape first; run() took only a .json
    logdir = artefact_paths(path).logdir
    traced = report.probes is not None and report.probes.tf_profile is not None
    if not logdir.is_dir() or logdir.is_symlink():
        why = "it is missing" if traced else "the run was profiled without tf_profiler=True"
        raise InputError(f"{path}: no TF profiler trace at {logdir} ({why})")
    _check_plain_files(logdir)
    if not any(logdir.glob("plugins/profile/*/*.xplane.pb")):
        why = "it is missing" if traced else "the run was profiled without tf_profiler=True"
        raise InputError(f"{path}: no TF profiler trace at {logdir} ({why})")
    from tfdiag.records.manifest import matches

    if not matches(saved_files(path).get(logdir.name), logdir, max_bytes=MAX_LOGDIR_BYTES):
        raise InputError(
            f"{logdir}: not the trace saved with {path.name} (replaced since, or the save was "
            "cut short); save the report again"
        )
    return logdir


def _check_plain_files(logdir: Path) -> None:
    total = 0
    for root, dirs, files in os.walk(logdir):
        for name in (*dirs, *files):
            p = Path(root, name)
            if p.is_symlink() or (name in files and not p.is_file()):
                raise InputError(f"{p}: not a regular file; a logdir holds plain files only")
            if name in files:
                total += p.stat().st_size
        if total > MAX_LOGDIR_BYTES:
            raise InputError(f"{logdir}: larger than {MAX_LOGDIR_BYTES // 2**30} GiB")


def host_checked(app: WsgiApp) -> WsgiApp:
    """The WSGI app, answering 403 to another ``Host`` (DNS rebinding) or a capture."""
    from tfdiag.frontends.snakeviz_server import host_allowed

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        if not host_allowed(str(environ.get("HTTP_HOST", ""))) or path.endswith(REFUSED_SUFFIXES):
            start_response("403 Forbidden", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"403 Forbidden\n"]
        return app(environ, start_response)

    return guarded


def logdir_of(path: Path) -> Path:
    """The checked logdir that ``path`` names: a report's (:func:`logdir_for`), or a
    ``.tfprofile`` folder — checked against the report saved beside it when there is one."""
    from tfdiag.records.report import REPORT_SUFFIX
    from tfdiag.render.artefacts import LOGDIR_SUFFIX

    if path.name.endswith(".json"):
        return logdir_for(path)
    if not path.name.endswith(LOGDIR_SUFFIX) or not path.is_dir():
        raise InputError(f"{path}: expected a .tfdiag.json report or its {LOGDIR_SUFFIX} logdir")
    report = path.with_name(path.name[: -len(LOGDIR_SUFFIX)] + REPORT_SUFFIX)
    if report.is_file():
        return logdir_for(report)
    if path.is_symlink():
        raise InputError(f"{path}: a link; name the logdir itself")
    _check_plain_files(path)
    if not any(path.glob("plugins/profile/*/*.xplane.pb")):
        raise InputError(f"{path}: no TF profiler trace in it (plugins/profile/*/*.xplane.pb)")
    return path


class _Quiet(io.TextIOBase):
    """stderr without xprof's per-request JSON lines (``{"httpRequest": ...}``), which it
    writes to the ``sys.stderr`` it saw at import, for cloud log collectors."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self._line = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._line += text
        *lines, self._line = self._line.split("\n")
        for line in lines:
            if not line.startswith('{"httpRequest"'):
                self.stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


class _DropNoise(logging.Filter):
    """INFO lines, the tracebacks logged while xprof looks for a cache that is not written
    yet (FileNotFoundError), and TensorBoard's warnings about its own response headers."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return False
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, FileNotFoundError):
            return False
        return "this warning will become an error" not in record.getMessage()


def _quiet_logs() -> None:
    for name in ("tensorboard", "tensorboard.plugins.profile", "werkzeug"):
        logging.getLogger(name).addFilter(_DropNoise())


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through the copy's clean-up, as Ctrl-C does


@contextmanager
def _cleaned_up_on_hangup() -> Iterator[None]:
    """SIGTERM and SIGHUP end the command by unwinding (its ``finally`` blocks run)."""
    previous = {}
    try:
        for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None:
                previous[sig] = signal.signal(sig, _exit_on_signal)
    except ValueError:  # not the main thread: leave the process's handlers alone
        pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(args: argparse.Namespace) -> int:
    logdir = logdir_of(Path(args.path))
    if importlib.util.find_spec("tensorboard") is None:
        raise InputError("TensorBoard is not installed: pip install tensorboard")
    sweep_stale()
    with _cleaned_up_on_hangup():
        return _serve_copy(args, logdir)


def _serve_copy(args: argparse.Namespace, logdir: Path) -> int:
    with tempfile.TemporaryDirectory(prefix=prefix("tensorboard")) as tmp:
        served = Path(tmp) / logdir.name
        shutil.copytree(logdir, served)  # plain files only (checked): xprof's caches go here
        stderr = sys.stderr
        sys.stderr = _Quiet(stderr)  # before xprof is imported: it binds sys.stderr then
        try:
            _quiet_logs()
            with quiet():  # TensorFlow's import, xprof's lines per tool read (native_log)
                return _serve(args, logdir, served)
        finally:
            sys.stderr = stderr


def _serve(args: argparse.Namespace, logdir: Path, served: Path) -> int:
    from tensorboard import program

    def server(app: WsgiApp, flags: Any) -> Any:
        try:
            return program.create_port_scanning_werkzeug_server(host_checked(app), flags)
        except program.TensorBoardServerException as exc:
            raise InputError(f"port {flags.port} on 127.0.0.1: {exc.msg}") from None

    tb = program.TensorBoard(server_class=server)
    tb.configure(
        argv=[
            None,
            *("--logdir", str(served), "--host", "127.0.0.1", "--port", str(args.port)),
            *("--load_fast", "false"),  # else a NOTE about its experimental loader
        ]
    )
    print(
        f"TensorBoard for {logdir}, bound to 127.0.0.1 only (Ctrl-C stops it): "
        f"http://127.0.0.1:{args.port}/#profile",
        flush=True,
    )
    try:
        failed = tb.main()
    except KeyboardInterrupt:
        return 0
    return 2 if failed else 0
