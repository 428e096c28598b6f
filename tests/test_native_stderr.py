"""TensorFlow's absl start-up lines (#12): printed twice by ``import tensorflow`` itself (two
native libraries, each with its own absl and CUDA stub), kept out of the CLI's stderr by a
filter that drops exactly them and passes everything else — also what a crash wrote."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT, run_cli

ABSL = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
CUDA = "cudart_stub.cc"
STUB_LINE = (
    "I0000 00:00:1796133514.335378   29037 cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used."
)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_filter_drops_only_the_known_lines_and_puts_fd_2_back() -> None:
    code = (
        "import os, sys\n"
        "from tfdiag.frontends.native_stderr import known_lines_dropped\n"
        "try:\n"
        "    with known_lines_dropped():\n"
        f"        os.write(2, {ABSL!r}.encode() + b'\\n')\n"
        f"        os.write(2, {STUB_LINE!r}.encode() + b'\\n')\n"
        "        os.write(2, b'E0000 cudart_stub.cc:31] something else went wrong\\n')\n"
        f"        os.write(2, b'before: ' + {ABSL!r}.encode() + b'\\n')\n"
        "        print('python stderr', file=sys.stderr)\n"
        "        os.write(2, b'no newline at the end')\n"
        "        raise RuntimeError('boom')\n"
        "except RuntimeError:\n"
        "    pass\n"
        "os.write(2, b'\\nfd 2 is back\\n')\n"
    )
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "E0000 cudart_stub.cc:31] something else went wrong",  # not the known line: kept
        "before: " + ABSL,  # not the whole line: kept
        "python stderr",
        "no newline at the end",
        "fd 2 is back",
    ]


def test_what_a_crash_inside_the_import_wrote_still_arrives() -> None:
    code = (
        "import os\n"
        "from tfdiag.frontends.native_stderr import known_lines_dropped\n"
        "with known_lines_dropped():\n"
        f"    os.write(2, {ABSL!r}.encode() + b'\\n')\n"
        "    os.write(2, b'F0000 the library was compiled to use AVX\\n')\n"
        "    os.abort()\n"
    )
    proc = _python(code)
    assert proc.returncode != 0
    assert proc.stderr.splitlines() == ["F0000 the library was compiled to use AVX"]


@pytest.mark.tf
def test_demo_shows_no_absl_start_up_lines() -> None:
    # `import tensorflow` alone prints them, twice on a CPU machine (TF 2.21):
    # libtensorflow_framework.so.2 and _pywrap_profiler_plugin.so each log both lines while
    # they load. (Where a GPU is found the stub line is not written; absl's WARNING is.)
    plain = _python("import tensorflow")
    assert plain.returncode == 0, plain.stderr
    assert ABSL in plain.stderr, f"TF no longer prints it: revisit native_stderr.py\n{plain.stderr}"
    demo = run_cli("demo", "--iterations", "3")
    assert demo.returncode == 0, demo.stderr
    assert ABSL not in demo.stderr and CUDA not in demo.stderr, demo.stderr
    assert "Functional.predict" in demo.stdout
