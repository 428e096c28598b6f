"""Native log lines written while tfdiag works, kept off the user's stderr and with the report.

TensorFlow, its profiler and xprof log from C++ through absl/glog straight to fd 2, whatever
Python's ``sys.stderr`` is: ``import tensorflow`` (oneDNN, CUDA stub, CPU features), a TF
profiler session (``cuInit``, ``session_manager.cc … expects an i value`` ×4, start/stop lines),
xprof reading a trace (30–40 lines of ``ConvertMultiXSpacesToCombinedOpStats``…). A user who
imported TensorFlow and called ``tfdiag.profile`` saw 50 such lines above the report.

:func:`quiet` is a block (a *window*) during which fd 2 is a pipe read by a small keeper
process. The keeper sorts lines by their **format**, not by a list of known messages: absl's
``I``/``W``/``E`` lines (``I1201 21:26:55.193595 2595 save_profile.cc:150] …``), the lines
that continue one of them in the same write, and absl's own "before InitializeLog" preamble are
kept; every other byte — a Python warning, a print, a fatal ``F`` line, a crash's message — is
passed on to the real stderr as it comes. At the end of the window the kept lines come back to
this process (:func:`take`), and a report carries them (``native_log``: a count in its notes,
the lines in its JSON and under ``explain --verbose``). Should the process die inside a window
(``abort()``, a segfault, ``kill -9``), the keeper, which outlives it, writes the kept lines to
the real stderr too: nothing from a crash is lost.

The keeper is started once per process (and again if fd 2 is pointed elsewhere, as pytest
does per test); a window costs two ``dup2`` calls and one round trip to it.
``TFDIAG_NATIVE_LOG=show`` turns windows off (everything reaches stderr).
"""

from __future__ import annotations

import importlib
import io
import os
import secrets
import select
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TextIO

#: Kept lines per process beyond which only a count is kept.
MAX_LINES = 2000
#: A kept line longer than this is cut (a log line is one message).
MAX_LINE_CHARS = 1000
#: How long the end of a window waits for the keeper's answer before giving the lines up.
REPLY_TIMEOUT_S = 10.0

#: The keeper: bytes in on stdin; log lines kept, the rest out on stderr at once; on the
#: marker line the kept lines go back on stdout; on EOF (the writer is gone) kept lines
#: not yet sent back are written to stderr (a crash inside a window loses nothing).
_KEEPER = r"""
import os, re, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
marker = sys.argv[1].encode()
log = re.compile(rb"[IWE]\d{4} [\d:.]+ +\d+ [^\s:\]]+:\d+\] ")
preamble = b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
keep_out = (b"Traceback", b"Fatal Python error", b"  File ", b"terminate called", b"F")
python_log = re.compile(rb"[A-Z]+:[\w.]+:")
kept = []
pending = b""
def out(data):
    while data:
        data = data[os.write(2, data):]
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    lines = (pending + chunk).split(b"\n")
    pending = lines.pop()
    passed = []
    follows = False
    for line in lines:
        bare = line.rstrip(b"\r")
        if bare == marker:
            if passed:
                out(b"".join(passed)); passed = []
            reply = b"".join(len(k).to_bytes(4, "big") + k for k in kept)
            os.write(1, reply + b"\xff\xff\xff\xff"); kept = []
            follows = False
        elif log.match(bare) or bare == preamble:
            kept.append(bare); follows = True
        elif follows and bare and not bare.startswith(keep_out) and not python_log.match(bare):
            kept.append(bare)
        else:
            passed.append(line + b"\n"); follows = False
    if passed:
        out(b"".join(passed))
if pending:
    out(pending)
if kept:
    out(b"".join(k + b"\n" for k in kept))
"""

_lock = threading.RLock()
_depth = 0
_kept: list[str] = []
_dropped = 0


class _Keeper:
    """The keeper process, started for one stderr target (its device and inode)."""

    def __init__(self, target: tuple[int, int]) -> None:
        self.target = target
        self.marker = "tfdiag-native-log-" + secrets.token_hex(8)
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _KEEPER, self.marker],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # this process's fd 2 as it is now: the real stderr
            bufsize=0,
            close_fds=True,
        )

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def write_fd(self) -> int:
        assert self.proc.stdin is not None
        return self.proc.stdin.fileno()

    def collect(self) -> list[bytes] | None:
        """Send the marker and read back what was kept since the last one (None: no answer)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(self.marker.encode() + b"\n")
        except OSError:
            return None
        fd = self.proc.stdout.fileno()
        data = b""
        while (frames := _frames(data)) is None:
            ready, _, _ = select.select([fd], [], [], REPLY_TIMEOUT_S)
            if not ready:
                return None
            more = os.read(fd, 65536)
            if not more:
                return None
            data += more
        return frames

    def close(self) -> None:
        with suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        with suppress(Exception):
            self.proc.wait(timeout=5)


def _frames(data: bytes) -> list[bytes] | None:
    """The kept lines of a reply: length-prefixed frames up to a terminator at the very end of
    ``data``; None while the reply is not whole."""
    out: list[bytes] = []
    at = 0
    while at + 4 <= len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        at += 4
        if size == 0xFFFFFFFF:
            return out if at == len(data) else None
        out.append(data[at : at + size])
        at += size
    return None


_keeper: _Keeper | None = None


def _stderr_target() -> tuple[int, int] | None:
    try:
        st = os.fstat(2)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _keeper_for(target: tuple[int, int]) -> _Keeper | None:
    global _keeper
    if _keeper is not None and (_keeper.target != target or not _keeper.alive):
        _keeper.close()
        _keeper = None
    if _keeper is None:
        try:
            _keeper = _Keeper(target)
        except OSError:
            return None
    return _keeper


@contextmanager
def quiet() -> Iterator[None]:
    """Within the block, native log lines written to fd 2 are kept (:func:`take`), not shown.

    Nested blocks share the outermost one. Where fd 2 cannot be redirected (closed, or the
    keeper cannot start) or ``TFDIAG_NATIVE_LOG=show``, the block runs as it is.
    """
    global _depth
    with _lock:
        if _depth or os.environ.get("TFDIAG_NATIVE_LOG") == "show":
            _depth += 1
            try:
                yield
            finally:
                _depth -= 1
            return
        target = _stderr_target()
        keeper = _keeper_for(target) if target is not None else None
        if keeper is None:
            yield
            return
        with suppress(Exception):
            sys.stderr.flush()
        saved = os.dup(2)
        python_stderr = _python_stderr_to(saved)
        try:
            os.dup2(keeper.write_fd(), 2)
            _depth += 1
            try:
                yield
            finally:
                _depth -= 1
                with suppress(Exception):
                    sys.stderr.flush()
                os.dup2(saved, 2)
                _keep(keeper.collect())  # however the block ended
        finally:
            if python_stderr is not None:
                sys.stderr = python_stderr
            os.close(saved)


def _python_stderr_to(fd: int) -> TextIO | None:
    """Point ``sys.stderr`` at ``fd`` (the real stderr) for the window, when it writes to fd 2:
    what Python itself writes (a warning, a print) never enters the pipe, so the keeper sees
    native output only. Returns the ``sys.stderr`` to put back (None: left as it was)."""
    current = sys.stderr
    try:
        if current is None or current.fileno() != 2:
            return None
        current.flush()
        sys.stderr = open(  # noqa: SIM115 - closed with the window (closefd=False)
            fd,
            "w",
            encoding=current.encoding,
            errors=current.errors,
            buffering=1,
            closefd=False,
        )
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return None
    return current


def _keep(lines: list[bytes] | None) -> None:
    global _dropped
    for raw in lines or ():
        if len(_kept) >= MAX_LINES:
            _dropped += 1
            continue
        _kept.append(raw.decode("utf-8", "replace")[:MAX_LINE_CHARS])


def take() -> tuple[tuple[str, ...], int]:
    """The lines kept since the last call, and how many more were kept beyond
    :data:`MAX_LINES` (counted, not stored); the store is emptied."""
    global _dropped
    with _lock:
        lines, more = tuple(_kept), _dropped
        _kept.clear()
        _dropped = 0
    return lines, more


def import_tensorflow() -> None:
    """Import TensorFlow now and let it look for its devices (which, on a machine without a
    GPU, logs ``failed call to cuInit``), their log lines kept; nothing if it is imported
    already or not installed (the code that needs it then says so). Listing the physical
    devices leaves them configurable (``set_memory_growth`` still works after it)."""
    if "tensorflow" in sys.modules:
        return
    with quiet(), suppress(ImportError):
        tf = importlib.import_module("tensorflow")
        with suppress(Exception):
            tf.config.list_physical_devices()
