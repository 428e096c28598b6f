"""The child process of ``tfdiag capture``: one call to TensorFlow's profiler client.

``python -m tfdiag.capture.trace_client URLS LOGDIR DURATION_MS READY_FD ERROR_FILE``
imports TensorFlow, writes the time to ``READY_FD`` (from then on the parent bounds the
wait by the duration plus a margin, and kills this process past it: TensorFlow's own wait
on a listener that is not a profiler server is about 75 s), then traces. A failure is
written to ``ERROR_FILE`` as one line, and the exit code is 1. Its stdout and stderr go to a
file beside it (:class:`tfdiag.capture.remote._Client`): all this process writes there is
tfdiag's own work (TensorFlow's import, the profiler options' and the client's progress
lines), never the user's terminal.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    urls, logdir, duration_ms, ready_fd, error_file = argv
    import tensorflow as tf

    from tfdiag.capture.tfprofiler import HOST_TRACER_LEVEL

    options = tf.profiler.experimental.ProfilerOptions(
        host_tracer_level=HOST_TRACER_LEVEL, python_tracer_level=0, device_tracer_level=1
    )
    os.write(int(ready_fd), repr(time.monotonic()).encode())  # the system's monotonic clock
    os.close(int(ready_fd))
    try:
        tf.profiler.experimental.client.trace(
            urls, logdir, duration_ms=int(duration_ms), num_tracing_attempts=1, options=options
        )
    except Exception as exc:  # UnavailableError, RuntimeError, InvalidArgumentError...
        first = " ".join(str(exc).split())[:300]
        Path(error_file).write_text(f"{type(exc).__name__}: {first}", encoding="utf-8")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
