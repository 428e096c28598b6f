"""Run a tf.distribute job as worker processes on 127.0.0.1 for a test, and always clean
them up: each worker is its own process group (``setsid``), dies with the test process
(``PR_SET_PDEATHSIG``), and is killed with its group (``killpg``) when the block ends,
whatever ends it."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports free on 127.0.0.1 now (held open together while chosen)."""
    held = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            held.append(s)
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


def _in_child() -> None:
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the test
    os.setsid()


@dataclass
class Job:
    procs: list[subprocess.Popen[bytes]]
    logs: list[Path]
    prof_ports: list[int]

    def log(self, i: int) -> str:
        return self.logs[i].read_text(errors="replace")

    def crashed_in_tensorflow(self) -> bool:
        """A worker died of a native crash (TF 2.21's profiler, see docs/distributed.md)."""
        marks = ("Fatal Python error", "free(): invalid pointer", "munmap_chunk()")
        return any(m in self.log(i) for i in range(len(self.procs)) for m in marks)

    def wait_for(self, text: str, timeout: float) -> None:
        """Until every worker has printed ``text``; fails with the logs when one died."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if all(text in self.log(i) for i in range(len(self.procs))):
                return
            for i, p in enumerate(self.procs):
                if p.poll() is not None and text not in self.log(i):
                    raise AssertionError(f"worker {i} exited {p.returncode}:\n{self.log(i)}")
            time.sleep(0.05)
        raise AssertionError(f"workers did not print {text!r} in {timeout:g}s: {self.logs}")

    def finish(self, timeout: float) -> None:
        """Until every worker exits; fails unless all exit 0."""
        end = time.monotonic() + timeout
        for i, p in enumerate(self.procs):
            try:
                p.wait(timeout=max(end - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                raise AssertionError(f"worker {i} still running:\n{self.log(i)}") from None
            assert p.returncode == 0, f"worker {i} exited {p.returncode}:\n{self.log(i)}"


@contextlib.contextmanager
def job(out: Path, mode: str, *, workers: int = 2, env: dict[str, str]) -> Iterator[Job]:
    ports = free_ports(2 * workers)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports[:workers]]}
    procs: list[subprocess.Popen[bytes]] = []
    logs = [out / f"worker{i}.log" for i in range(workers)]
    try:
        for i in range(workers):
            task = {"cluster": cluster, "task": {"type": "worker", "index": i}}
            child_env = {
                **os.environ,
                **env,
                "TF_CPP_MIN_LOG_LEVEL": "3",
                "TF_CONFIG": json.dumps(task),
                "PROF_PORT": str(ports[workers + i]),
                "PYTHONPATH": str(ROOT),
            }
            with open(logs[i], "wb") as log:
                procs.append(
                    subprocess.Popen(
                        [sys.executable, str(HERE / "dist_worker.py"), str(out), mode],
                        env=child_env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        preexec_fn=_in_child,
                    )
                )
        yield Job(procs, logs, ports[workers:])
    finally:
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait()
