"""TensorFlow's absl start-up lines, kept out of the CLI's stderr.

``import tensorflow`` (TF 2.21, CPU) writes, even with ``TF_CPP_MIN_LOG_LEVEL=3``::

    WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
    I0000 00:00:… cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will …

twice, from two native libraries that each link their own copy of absl and of the CUDA
runtime stub: ``libtensorflow_framework.so.2`` (loaded first) and
``tensorflow/python/profiler/internal/_pywrap_profiler_plugin.so`` (loaded by
``import tensorflow`` itself, through ``tf.profiler.experimental.client``). Each stub logs
from its library's load-time initialiser, before anything has called
``absl::InitializeLog()``, and absl, until then, writes every message to fd 2 whatever its
level: TensorFlow's ``TF_CPP_MIN_LOG_LEVEL`` is never read for them (docs/cli.md).

:func:`import_tensorflow` imports TensorFlow with fd 2 pointed at a pipe read by a small
filter process that drops exactly those two lines and passes every other byte on as it
comes, so a real error — a crash or an ``abort()`` in the import included — still reaches
the terminal: the filter outlives its writer and forwards everything before it exits. fd 2
is put back however the import ends.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

#: The lines dropped, whole lines only (regular expressions on bytes).
KNOWN_LINES = (
    rb"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR",
    rb"I\d{4} [\d:.]+ +\d+ cudart_stub\.cc:\d+\] Could not find cuda drivers on your machine, "
    rb"GPU will not be used\.",
)

#: The filter process: lines in on stdin, every line but the known ones out on stdout.
_FILTER = """
import re, sys
known = [re.compile(p.encode()) for p in sys.argv[1:]]
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    if not any(k.fullmatch(line.rstrip(b"\\r\\n")) for k in known):
        out.write(line)
        out.flush()
"""


@contextmanager
def known_lines_dropped(fd: int = 2) -> Iterator[None]:
    """Within the block, ``fd``'s known absl start-up lines are dropped, all else passes.

    Where fd 2 cannot be duplicated or the filter cannot start, the block runs as it is."""
    with suppress(Exception):
        sys.stderr.flush()
    try:
        saved = os.dup(fd)
    except OSError:
        yield
        return
    try:
        child = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _FILTER, *(p.decode() for p in KNOWN_LINES)],
            stdin=subprocess.PIPE,
            stdout=saved,
            stderr=saved,
        )
    except OSError:
        os.close(saved)
        yield
        return
    assert child.stdin is not None
    try:
        os.dup2(child.stdin.fileno(), fd)
        yield
    finally:
        with suppress(Exception):
            sys.stderr.flush()
        os.dup2(saved, fd)
        os.close(saved)
        child.stdin.close()
        with suppress(subprocess.TimeoutExpired):
            child.wait(timeout=10)  # it exits once it has forwarded what it was given


def import_tensorflow() -> None:
    """Import TensorFlow now, without its absl start-up lines; nothing if it is imported
    already or not installed (the import that needs it then says so, as before)."""
    if "tensorflow" in sys.modules:
        return
    with known_lines_dropped():
        with suppress(ImportError):
            importlib.import_module("tensorflow")
