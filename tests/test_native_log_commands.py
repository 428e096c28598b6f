"""No native log line from tfdiag's own work reaches stderr, command by command (#35.6, #32):
``profile()`` in a program that imported TensorFlow itself, ``compare()`` and ``tfdiag
compare``, ``tfdiag capture`` and ``tfdiag tensorboard``. Which native lines a machine prints
differs (oneDNN's per CPU, CUDA's per driver), so each test compares with what the same
program prints without tfdiag, or asserts on a part of the output where only tfdiag runs."""

from __future__ import annotations

import gzip
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import ROOT

#: A native log line: absl's format, TSL's older dated one, absl's preamble, and the second
#: line of TensorFlow's CPU-feature message (no format of its own).
NATIVE = re.compile(
    r"^([IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] |\d{4}-\d\d-\d\d [\d:.]+: [IWEF] "
    r"|WARNING: All log messages before|To enable the following instructions: )"
)
#: Where a native line comes from (``cuda_platform.cc:52``), the same in every run.
SOURCE = re.compile(r"^[IWEF]\d{4} [\d:.]+ +\d+ (\S+:\d+)\] ")
ENV = {"TF_CPP_MIN_LOG_LEVEL": "0", "COLUMNS": "120", "PYTHONPATH": str(ROOT)}
MARK = "== tfdiag starts =="


def _native(text: str) -> list[str]:
    return [line for line in text.splitlines() if NATIVE.match(line)]


def _sources(lines: list[str]) -> set[str]:
    return {m[1] if (m := SOURCE.match(line)) else line.split(" ", 1)[0] for line in lines}


def _python(code: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfdiag", *args],
        cwd=cwd,
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


PROFILE_PROGRAM = (
    "import sys\n"
    "import numpy as np, tensorflow as tf, keras\n"
    "x = np.zeros((8, 4), 'float32')\n"
    "def step(a):\n"  # the program's own work: no TensorFlow op of its own
    "    return np.tanh(a) * 2\n"
    "print('user line', file=sys.stderr, flush=True)\n"
    "if sys.argv[1] == 'tfdiag':\n"
    "    import tfdiag\n"
    "    report = tfdiag.profile(step, x, iterations=4, progress=False)\n"
    "    report.show()\n"
    "else:\n"
    "    for _ in range(6):\n"
    "        step(x)\n"
    "print('user line 2', file=sys.stderr, flush=True)\n"
)


@pytest.mark.tf
def test_profile_in_a_program_that_imported_tensorflow_adds_no_native_line() -> None:
    alone = _python(PROFILE_PROGRAM, "alone")
    profiled = _python(PROFILE_PROGRAM, "tfdiag")
    assert alone.returncode == 0 and profiled.returncode == 0, profiled.stderr
    # the program's own lines, and what TensorFlow's import wrote, are left as they are
    users = [line for line in profiled.stderr.splitlines() if line.startswith("user line")]
    assert users == ["user line", "user line 2"]
    added = _sources(_native(profiled.stderr)) - _sources(_native(alone.stderr))
    assert added == set(), profiled.stderr  # e.g. cuda_platform.cc:52 failed call to cuInit


@pytest.mark.tf
def test_compare_in_a_program_adds_no_native_line() -> None:
    code = (
        "import sys\n"
        "import numpy as np, keras\n"
        "import tfdiag\n"
        "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
        "model.compile('adam', 'mse')\n"
        "x, y = np.zeros((16, 4), 'float32'), np.zeros((16, 1), 'float32')\n"
        "model.predict(x, verbose=0)\n"  # the program's own first ops: its own lines
        f"print({MARK!r}, file=sys.stderr, flush=True)\n"
        "result = tfdiag.compare(model, x, y, warmup=1, repeats=2, progress=False)\n"
        "result.show()\n"
        "print('user line after', file=sys.stderr, flush=True)\n"
    )
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    after = proc.stderr.split(MARK, 1)[1]
    assert _native(after) == [], after  # XLA's service and "Compiled cluster" lines
    assert "user line after" in after


def _saved_model(tmp_path: Path) -> None:
    code = (
        "import sys, numpy as np, keras\n"
        "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
        "model.compile('adam', 'mse')\n"
        "model.save(sys.argv[1] + '/m.keras')\n"
        "np.save(sys.argv[1] + '/x.npy', np.zeros((16, 4), 'float32'))\n"
    )
    made = _python(code, str(tmp_path))
    assert made.returncode == 0, made.stderr


@pytest.mark.tf
def test_the_compare_command_prints_no_native_line(tmp_path: Path) -> None:
    _saved_model(tmp_path)
    args = ("--model", "m.keras", "--x", "x.npy", "--repeats", "2", "--warmup", "1")
    proc = _cli("compare", *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _native(proc.stderr) == [], proc.stderr


WORKER = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "import tensorflow as tf, tf_keras\n"
    "port, stop = int(sys.argv[1]), Path(sys.argv[2])\n"
    "tf.profiler.experimental.server.start(port)\n"
    "model = tf_keras.Sequential([tf_keras.layers.Dense(8, input_shape=(4,)),"
    " tf_keras.layers.Dense(1)])\n"
    "model.compile('sgd', 'mse')\n"
    "ds = tf.data.Dataset.from_tensor_slices((tf.zeros([64, 4]), tf.zeros([64, 1])))"
    ".batch(8).repeat()\n"
    "class Stop(tf_keras.callbacks.Callback):\n"
    "    def on_train_batch_end(self, batch, logs=None):\n"
    "        if batch == 3:\n"
    "            print('training', flush=True)\n"
    "        time.sleep(0.005)\n"
    "        if stop.exists() or batch > 60000:\n"
    "            self.model.stop_training = True\n"
    "model.fit(ds, steps_per_epoch=100000, epochs=1, verbose=0, callbacks=[Stop()])\n"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.tf
def test_the_capture_command_prints_no_native_line(tmp_path: Path) -> None:
    port, stop = _free_port(), tmp_path / "stop"
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(port), str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the job's own lines are not tfdiag's
        text=True,
        env={**os.environ, **ENV},
    )
    try:
        assert worker.stdout is not None
        for line in worker.stdout:  # steady steps from here
            if line.strip() == "training":
                break
        proc = _cli(
            "capture", f"grpc://127.0.0.1:{port}", "--duration-ms", "800", "--out", "job",
            cwd=tmp_path,
        )  # fmt: skip
    finally:
        stop.touch()
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
    assert proc.returncode == 0, proc.stderr
    assert _native(proc.stderr) == [], proc.stderr
    assert "Starting to trace" not in proc.stderr  # the profiler client's progress print


@pytest.mark.tf
def test_the_tensorboard_command_prints_no_native_line(tmp_path: Path) -> None:
    code = (
        "import sys, numpy as np, keras, tfdiag\n"
        "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
        "report = tfdiag.profile(model.predict, np.zeros((8, 4), 'float32'), iterations=3,"
        " verbose=0, progress=False)\n"
        "report.save(sys.argv[1] + '/run.tfdiag.json')\n"
    )
    saved = _python(code, str(tmp_path))
    assert saved.returncode == 0, saved.stderr
    port, log = _free_port(), tmp_path / "tensorboard.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tfdiag", "tensorboard", "run.tfdiag.json", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=tmp_path,
            env={**os.environ, **ENV},
        )
        try:
            base = f"http://127.0.0.1:{port}/data/plugin/profile"
            run = quote(_wait_for_runs(proc, base)[0])
            for tool in ("overview_page", "framework_op_stats", "trace_viewer"):
                _read(f"{base}/data?run={run}&tag={tool}&host=localhost")  # xprof reads them
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    text = log.read_text()
    assert "TensorBoard" in text  # its own line still comes
    assert _native(text) == [], text


def _read(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            body: bytes = resp.read()
    except urllib.error.HTTPError as exc:
        return exc.read()  # a tool without data answers 404: xprof has read the trace
    return gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body


def _wait_for_runs(proc: subprocess.Popen[bytes], base: str) -> list[str]:
    import json

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, "tensorboard exited"
        try:
            runs: list[str] = json.loads(_read(f"{base}/runs"))
        except (urllib.error.URLError, ConnectionError, ValueError):
            time.sleep(0.5)
            continue
        if runs:
            return runs
        time.sleep(0.5)
    pytest.fail("TensorBoard did not answer within 120 s")
