"""``python -m tfdiag tensorboard``: a real TensorBoard on a free port serves the saved trace."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from conftest import ROOT, run_cli

from tfdiag.analysis.xprof import parse_overview
from tfdiag.records.errors import InputError

#: TensorBoard imports TensorFlow before it listens: allow for a slow, shared machine.
STARTUP_S = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as resp:
        body = resp.read()
        if resp.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
    return json.loads(body)


def _wait_for(proc: subprocess.Popen[str], url: str, log: Path) -> Any:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"tensorboard exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            return _get(url)
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    pytest.fail(f"TensorBoard did not answer on {url} within {STARTUP_S} s")


@pytest.mark.tf
def test_tensorboard_serves_the_saved_trace_on_loopback(tmp_path: Path) -> None:
    saved = run_cli(
        "demo", "--iterations", "3", "--tf-profiler", "--no-verify", "--save", str(tmp_path / "run")
    )
    assert saved.returncode == 0, saved.stderr
    before = _listing(tmp_path / "run.tfprofile")
    port = _free_port()
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    log = tmp_path / "tensorboard.log"  # a file, not a pipe: TensorBoard logs every request
    err = log.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tfdiag",
            "tensorboard",
            str(tmp_path / "run.tfprofile"),  # the logdir itself is taken too (#12)
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        cwd=ROOT,
        env=env,
        # Ctrl-C as a terminal delivers it, even when this runs as a background job of a
        # non-interactive shell (which starts its jobs with SIGINT ignored).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    base = f"http://127.0.0.1:{port}/data/plugin/profile"
    try:
        runs = _wait_for(proc, f"{base}/runs", log)
        assert len(runs) == 1
        run = quote(runs[0])
        assert "overview_page" in _get(f"{base}/run_tools?run={run}")
        host = _get(f"{base}/hosts?run={run}&tag=overview_page")[0]["hostname"]
        overview = _get(f"{base}/data?run={run}&tag=overview_page&host={quote(host)}")
        assert parse_overview(overview).step_ms
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as resp:
            assert resp.status == 200
        # A DNS-rebinding page (another Host) and a capture request are refused.
        evil = urllib.request.Request(f"{base}/runs", headers={"Host": "evil.example"})
        capture = f"{base}/capture_profile?service_addr=10.0.0.1:6009&duration=1000"
        for request in (evil, capture):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=30)
            assert refused.value.code == 403
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err.close()
    out = proc.communicate()[0] or ""
    assert "bound to 127.0.0.1 only" in out and f"127.0.0.1:{port}" in out
    # #12: xprof's caches went into the saved logdir, and stderr carried a JSON line per
    # request, INFO lines and tracebacks about a cache file not written yet
    assert _listing(tmp_path / "run.tfprofile") == before
    noise = log.read_text()
    for line in ('"httpRequest"', "Traceback", ".cached_tools.json", "INFO ", "NOTE: Using"):
        assert line not in noise, noise[-3000:]


def _listing(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*"))


def test_tensorboard_takes_a_logdir_and_says_what_it_takes(tmp_path: Path) -> None:
    from synth import full_set_report

    from tfdiag.frontends.commands.tensorboard import logdir_of

    full_set_report().save(tmp_path / "run")
    assert logdir_of(tmp_path / "run.tfprofile") == tmp_path / "run.tfprofile"
    assert logdir_of(tmp_path / "run.tfdiag.json") == tmp_path / "run.tfprofile"
    alone = tmp_path / "other" / "x.tfprofile"
    (alone / "plugins" / "profile" / "r").mkdir(parents=True)
    with pytest.raises(InputError, match="no TF profiler trace"):
        logdir_of(alone)
    (alone / "plugins" / "profile" / "r" / "h.xplane.pb").write_bytes(b"trace")
    assert logdir_of(alone) == alone  # no report beside it: checked as plain files
    for bad in (tmp_path / "run.prof", tmp_path / "nothing.tfprofile"):
        with pytest.raises(InputError, match="expected a .tfdiag.json report or its"):
            logdir_of(bad)


def test_the_quiet_stderr_drops_only_xprofs_request_lines() -> None:
    import io

    from tfdiag.frontends.commands.tensorboard import _Quiet

    out = io.StringIO()
    quiet = _Quiet(out)
    quiet.write('{"httpRequest": {"status": 200}}\nTensorBoard 2.21 at http')
    quiet.write("://127.0.0.1:6006/\n")
    assert out.getvalue() == "TensorBoard 2.21 at http://127.0.0.1:6006/\n"


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.tf
def test_a_hangup_removes_the_served_copy_and_a_killed_ones_copy_is_swept(tmp_path: Path) -> None:
    """#20.12: a closed terminal (SIGHUP) left the temporary copy of the trace; so did
    kill -9, which no handler sees: the next ``tfdiag tensorboard`` removes that one."""
    logdir = tmp_path / "x.tfprofile"
    (logdir / "plugins" / "profile" / "r").mkdir(parents=True)
    (logdir / "plugins" / "profile" / "r" / "h.xplane.pb").write_bytes(b"trace")
    tmp = tmp_path / "tmp"
    stale = tmp / f"tfdiag-tensorboard-{_dead_pid()}-k1ll3d"
    (stale / "x.tfprofile").mkdir(parents=True)
    port = _free_port()
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TMPDIR": str(tmp)}
    log = tmp_path / "tensorboard.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tfdiag", "tensorboard", str(logdir), "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=ROOT,
            env=env,
        )
        try:
            _wait_for(proc, f"http://127.0.0.1:{port}/data/plugin/profile/runs", log)
            copies = _copies(tmp)  # the stale one is gone, its own is there
            assert copies and all(n.startswith(f"tfdiag-tensorboard-{proc.pid}-") for n in copies)
            proc.send_signal(signal.SIGHUP)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 128 + signal.SIGHUP, log.read_text()[-2000:]
    assert _copies(tmp) == []


def _copies(tmp: Path) -> list[str]:
    """The copies in ``tmp`` (TensorBoard keeps its own ``.tensorboard-info`` there too)."""
    return [p.name for p in tmp.iterdir() if p.name.startswith("tfdiag-tensorboard-")]
