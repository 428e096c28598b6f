"""Native log lines from tfdiag's own work (#18): kept off stderr by their format — absl's
I/W/E lines, whatever they say, each on its own — with everything else passed on as it comes,
a crash's last words included, and the kept lines carried by the report. The window's
hazards (#32) are in test_native_log_window.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

#: absl's line format (before and after absl::InitializeLog()), and its preamble.
NATIVE = re.compile(r"^([IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] |WARNING: All log messages before)")
ABSL = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
EARLY = "I0000 00:00:1796133514.335378   29037 cudart_stub.cc:31] Could not find cuda drivers."
LATER = "W1201 21:26:55.193595    2595 session_manager.cc:55] delay_ms expects an i value."


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_window_keeps_log_lines_by_format_and_passes_everything_else() -> None:
    code = (
        "import os, sys\n"
        "from tfdiag.capture import native_log\n"
        "try:\n"
        "    with native_log.quiet():\n"
        f"        os.write(2, {ABSL!r}.encode() + b'\\n')\n"
        f"        os.write(2, {EARLY!r}.encode() + b'\\n')\n"
        f"        os.write(2, {LATER!r}.encode() + b'\\nTo enable more, rebuild.\\n')\n"
        "        print('python stderr right after a kept line', file=sys.stderr)\n"
        "        os.write(2, b'E0000 00:00:1.2 7 x.cc:1] any message at all\\n')\n"
        "        os.write(2, b'F0000 00:00:1.2 7 x.cc:1] a fatal line is never kept\\n')\n"
        "        os.write(2, b'a native line in no log format\\n')\n"
        "        raise RuntimeError('boom')\n"
        "except RuntimeError:\n"
        "    pass\n"
        "os.write(2, b'fd 2 is back\\n')\n"
        "lines, more = native_log.take()\n"
        "print(len(lines), more)\n"
        "print('\\n'.join(lines))\n"
    )
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "To enable more, rebuild.",  # no log format of its own: not kept (#32, defect 4)
        "python stderr right after a kept line",
        "F0000 00:00:1.2 7 x.cc:1] a fatal line is never kept",
        "a native line in no log format",
        "fd 2 is back",
    ]
    out = proc.stdout.splitlines()
    assert out[0] == "4 0"
    assert out[1:] == [
        ABSL,
        EARLY,
        LATER,
        "E0000 00:00:1.2 7 x.cc:1] any message at all",
    ]


CPU = (
    "I0000 00:00:1796662507.837883    6657 cpu_feature_guard.cc:227] This TensorFlow binary is "
    "optimized to use available CPU instructions in performance-critical operations."
)
CPU_2 = (
    "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild "
    "TensorFlow with the appropriate compiler flags."
)
DATED = "2023-10-10 12:00:00.123456: I tensorflow/core/util/port.cc:111] oneDNN is on."


def test_a_two_line_message_is_kept_whole_and_only_its_listed_second_line() -> None:
    """#35.6: the CPU-feature message of every TensorFlow import is two lines, and its second
    has no log format: it is kept right after its first line, never elsewhere; TSL's older
    dated format is a log format too."""
    code = (
        "import os\n"
        "from tfdiag.capture import native_log\n"
        "with native_log.quiet():\n"
        f"    os.write(2, ({CPU!r} + '\\n' + {CPU_2!r} + '\\n').encode())\n"
        f"    os.write(2, ({CPU_2!r} + '\\n').encode())\n"  # not after its first line
        f"    os.write(2, ({CPU!r} + '\\nuser\\n' + {CPU_2!r} + '\\n').encode())\n"
        f"    os.write(2, ({DATED!r} + '\\n').encode())\n"
        "print('\\n'.join(native_log.take()[0]))\n"
    )
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [CPU_2, "user", CPU_2]
    assert proc.stdout.splitlines() == [CPU, CPU_2, CPU, DATED]


def test_a_crash_inside_a_window_loses_nothing() -> None:
    code = (
        "import os\n"
        "from tfdiag.capture import native_log\n"
        "with native_log.quiet():\n"
        f"    os.write(2, {LATER!r}.encode() + b'\\n')\n"
        "    os.write(2, b'F0000 00:00:1.2 7 x.cc:1] Check failed: the library\\n')\n"
        "    os.abort()\n"
    )
    proc = _python(code)
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert "F0000 00:00:1.2 7 x.cc:1] Check failed: the library" in lines
    assert LATER in lines  # kept, and written out when the process died


def test_windows_are_off_when_asked_and_outside_a_window_nothing_is_kept() -> None:
    code = (
        "import os\n"
        "from tfdiag.capture import native_log\n"
        f"os.write(2, {LATER!r}.encode() + b'\\n')\n"
        "with native_log.quiet():\n"
        f"    os.write(2, {EARLY!r}.encode() + b'\\n')\n"
        "print(native_log.take())\n"
    )
    shown = _python(code, TFDIAG_NATIVE_LOG="show")
    assert shown.stderr.splitlines() == [LATER, EARLY]
    assert shown.stdout.strip() == "((), 0)"
    kept = _python(code)
    assert kept.stderr.splitlines() == [LATER]
    assert EARLY in kept.stdout


@pytest.mark.tf
def test_a_script_that_imports_tensorflow_sees_no_native_line_from_profile_and_show() -> None:
    code = (
        "import sys\n"
        "import numpy as np, tensorflow as tf, keras\n"
        "import tfdiag\n"
        "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
        "x = np.zeros((8, 4), 'float32')\n"
        "model.predict(x, verbose=0)\n"  # the program's own first ops: its own lines
        "print('== tfdiag starts ==', file=sys.stderr, flush=True)\n"
        "report = tfdiag.profile(model.predict, x, iterations=4, verbose=0, progress=False)\n"
        "report.show()\n"
        "print('kept', report.native_log.total, len(report.native_log.lines))\n"
    )
    proc = _python(code, COLUMNS="100", TF_CPP_MIN_LOG_LEVEL="0")  # TF logs all it has
    assert proc.returncode == 0, proc.stderr
    after = proc.stderr.split("== tfdiag starts ==", 1)[1].splitlines()
    assert [line for line in after if NATIVE.match(line)] == [], after
    total, saved = (int(v) for v in proc.stdout.rsplit("kept", 1)[1].split())
    assert total == saved
    assert "native log line" in proc.stdout or total == 0


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "0", "COLUMNS": "120", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "tfdiag", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.tf
def test_demo_and_explain_print_no_native_line(tmp_path: Path) -> None:
    demo = _cli("demo", "--iterations", "3", "--no-verify", "--save", "d.tfdiag.json", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert [line for line in demo.stderr.splitlines() if NATIVE.match(line)] == [], demo.stderr
    assert "Functional.predict" in demo.stdout
    explain = _cli("explain", "d.tfdiag.json", "--verbose", cwd=tmp_path)
    assert explain.returncode == 0, explain.stderr
    head, _, kept = explain.stderr.partition("native log lines kept while tfdiag worked:")
    assert [line for line in head.splitlines() if NATIVE.match(line)] == []
    assert kept  # --verbose: the kept lines, each indented as data
    assert all(line.startswith("  ") for line in kept.splitlines()[1:])
