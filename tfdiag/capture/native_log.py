"""Native log lines written while tfdiag works, kept off the user's stderr and with the report.

TensorFlow, its profiler and xprof log from C++ through absl straight to fd 2, whatever
Python's ``sys.stderr`` is: ``import tensorflow`` (oneDNN, CUDA stub, CPU features), a TF
profiler session (``cuInit``, ``session_manager.cc … expects an i value`` ×4, start/stop lines),
xprof reading a trace (30–40 lines of ``ConvertMultiXSpacesToCombinedOpStats``…). A user who
imported TensorFlow and called ``tfdiag.profile`` saw 50 such lines above the report.

:func:`quiet` is a short block (a *window*: TensorFlow's import by tfdiag, a profiler's start
and stop, xprof reading a trace) during which fd 2 is the write end of a pipe read by a keeper
process (``native_keeper.py``). The keeper keeps each whole line that matches absl's format on
its own and writes every other byte to the real stderr at once, in the order written: a
Python warning, a print, a fatal ``F`` line, a partial line (a progress bar), a crash's words.
What a window must never do, it does not:

- it makes one descriptor, the saved fd 2, closed when it ends; ``sys.stderr`` and every
  Python stream are left alone, so no logging handler created in a window (TensorFlow's,
  absl's) can hold anything of it;
- no line is kept for following a kept one, and no partial line waits for a newline past
  50 ms or the window's end (nothing tfdiag sends the keeper travels through the pipe);
- the end of a window is linear in what was written; a process forked during one starts
  with fd 2 as it was and no window (:func:`_forget_in_child`); if the program dies, the keeper
  writes what it kept at once, whatever children still hold the pipe; if the keeper dies, the
  bytes in its pipe are written out raw by this process (it holds the pipe's read end too).

At the end of a window the kept lines come back to this process (:func:`take`), and a report
carries them (``native_log``: a count in its notes, the lines in its JSON and under ``explain
--verbose``). ``TFDIAG_NATIVE_LOG=show`` turns windows off (everything reaches stderr).
"""

from __future__ import annotations

import importlib
import os
import select
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

#: Kept lines per process beyond which only a count is kept.
MAX_LINES = 2000
#: A kept line longer than this is cut (a log line is one message).
MAX_LINE_CHARS = 1000
#: How long the end of a window waits for each part of the keeper's answer.
REPLY_TIMEOUT_S = 10.0
_KEEPER_PATH = Path(__file__).with_name("native_keeper.py")

_state = threading.RLock()  # never held across a window's body
_depth = 0  # blocks, in any thread, inside the open window
_generation = 0  # a new one in a forked child: blocks entered before the fork are not its own
_kept: list[str] = []
_dropped = 0


class _Keeper:
    """The keeper process, started for one stderr target (its device and inode)."""

    def __init__(self, target: tuple[int, int]) -> None:
        self.target = target
        self.read_fd, self.write_fd = os.pipe()  # both non-inheritable
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_KEEPER_PATH), str(self.read_fd)]
                + [str(MAX_LINES), str(MAX_LINE_CHARS)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=None,  # this process's fd 2 as it is now: the real stderr
                bufsize=0,
                close_fds=True,
                pass_fds=(self.read_fd,),
            )
        except BaseException:
            self.forget()
            raise
        self.saved: int | None = None  # the real fd 2 while this keeper's window is open
        threading.Thread(target=self._watch, name="tfdiag-native-log", daemon=True).start()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def _watch(self) -> None:
        """Should the keeper die inside a window, the window ends now: fd 2 back, and what
        was left in the pipe written out raw (nothing waits on a full pipe, nothing is lost)."""
        with suppress(Exception):
            self.proc.wait()
        with _state:
            if self.saved is not None:
                os.dup2(self.saved, 2)
                self.rescue()

    def rescue(self) -> None:
        """Write what is in the pipe to fd 2 as it is (the keeper is gone)."""
        with suppress(OSError):
            os.set_blocking(self.read_fd, False)
            while chunk := os.read(self.read_fd, 65536):
                while chunk:
                    chunk = chunk[os.write(2, chunk) :]

    def collect(self) -> tuple[list[bytes], int] | None:
        """What was kept since the last call, and how many lines past the cap (None: no
        answer). The keeper reads all that is in the pipe before it answers."""
        assert self.proc.stdin is not None
        try:
            os.write(self.proc.stdin.fileno(), b"?")
        except OSError:
            return None
        head = self._read(16)
        if head is None:
            return None
        body = self._read(int.from_bytes(head[:8], "big"))
        if body is None:
            return None
        lines, at = [], 0
        while at < len(body):
            size = int.from_bytes(body[at : at + 4], "big")
            lines.append(body[at + 4 : at + 4 + size])
            at += 4 + size
        return lines, int.from_bytes(head[8:], "big")

    def _read(self, size: int) -> bytes | None:
        assert self.proc.stdout is not None
        fd, parts, got = self.proc.stdout.fileno(), [], 0
        while got < size:
            ready, _, _ = select.select([fd], [], [], REPLY_TIMEOUT_S)
            more = os.read(fd, min(size - got, 1 << 20)) if ready else b""
            if not more:
                return None
            parts.append(more)
            got += len(more)
        return b"".join(parts)

    def close(self) -> None:
        """Stop the keeper (it writes out what it kept), then write what it left in the pipe."""
        with suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        with suppress(OSError):
            os.close(self.write_fd)
        with suppress(Exception):
            self.proc.wait(timeout=5)
        if not self.alive:
            self.rescue()
        with suppress(OSError):
            os.close(self.read_fd)

    def forget(self) -> None:
        """Close this process's copies of the keeper's descriptors, without waiting on it."""
        fds = [self.read_fd, self.write_fd]
        proc = getattr(self, "proc", None)
        for stream in (proc.stdin, proc.stdout) if proc is not None else ():
            with suppress(Exception):
                fds.append(stream.fileno())
                stream.close()
        for fd in fds:
            with suppress(OSError):
                os.close(fd)


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

    Blocks that overlap (nested, or in other threads) share one window, which ends with the
    last of them. Where fd 2 cannot be redirected (closed, or the keeper cannot start) or
    ``TFDIAG_NATIVE_LOG=show``, the block runs as it is.
    """
    entered = _enter()
    try:
        yield
    finally:
        if entered is not None:
            _leave(entered)


def _enter() -> int | None:
    global _depth
    with _state:
        if _depth:
            _depth += 1
            return _generation
        if os.environ.get("TFDIAG_NATIVE_LOG") == "show":
            return None
        target = _stderr_target()
        keeper = _keeper_for(target) if target is not None else None
        if keeper is None:
            return None
        _flush_python_stderr()
        saved = os.dup(2)
        try:
            os.dup2(keeper.write_fd, 2)
        except OSError:
            os.close(saved)
            return None
        keeper.saved = saved
        _depth = 1
        return _generation


def _leave(generation: int) -> None:
    global _depth, _keeper, _dropped
    with _state:
        if generation != _generation:
            return  # entered before this process was forked: not this process's window
        _depth -= 1
        if _depth or _keeper is None or _keeper.saved is None:
            return
        keeper, saved = _keeper, _keeper.saved
        _flush_python_stderr()
        keeper.saved = None
        os.dup2(saved, 2)
        os.close(saved)
        answer = keeper.collect() if keeper.alive else None
        if answer is None:  # dead or silent: what it kept and left in the pipe, raw
            keeper.close()
            _keeper = None
            return
        lines, more = answer
        _dropped += more
        for raw in lines:
            if len(_kept) >= MAX_LINES:
                _dropped += 1
            else:
                _kept.append(raw.decode("utf-8", "replace")[:MAX_LINE_CHARS])


def _flush_python_stderr() -> None:
    with suppress(Exception):
        sys.stderr.flush()


def _before_fork() -> None:
    _state.acquire()


def _after_fork_in_parent() -> None:
    _state.release()


def _forget_in_child() -> None:
    """A process forked during a window starts with fd 2 as it was before it, no window and
    no keeper (the parent's is the parent's): its first window starts its own."""
    global _state, _depth, _generation, _keeper
    _state = threading.RLock()
    _generation += 1
    _depth = 0
    if _keeper is not None:
        if _keeper.saved is not None:
            with suppress(OSError):
                os.dup2(_keeper.saved, 2)
                os.close(_keeper.saved)
        _keeper.saved = None
        _keeper.forget()
        _keeper = None


os.register_at_fork(
    before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_forget_in_child
)


def take() -> tuple[tuple[str, ...], int]:
    """The lines kept since the last call, and how many more were kept beyond
    :data:`MAX_LINES` (counted, not stored); the store is emptied."""
    global _dropped
    with _state:
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
