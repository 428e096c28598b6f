"""``tfdiag snakeviz``: a real server on 127.0.0.1, probed over HTTP the way a browser (or an
attacker's page) would. It serves the report's own profile and nothing else, checks the Host
header, shows no traceback, and goes away with tfdiag (docs/security.md)."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from conftest import ROOT
from synth import keras3_predict_report

from tfdiag.records.stats import FunctionStat, ProfileStats

HOSTILE = "</script><script>alert(1)</script>"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``python -m tfdiag snakeviz PATH --no-browser --port P`` and its stdout, line by line."""

    def __init__(
        self, path: Path, port: int, tmp: Path, *, browser: bool = False, env: Any = None
    ) -> None:
        env = {**(env or os.environ), "TMPDIR": str(tmp), "TF_CPP_MIN_LOG_LEVEL": "3"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tfdiag", "snakeviz", str(path), "--port", str(port)]
            + ([] if browser else ["--no-browser"]),
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.port = port
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def url(self, timeout: float = 60) -> str:
        """The address it printed, once it answers there."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.seen.append(self.lines.get(timeout=0.2))
            except queue.Empty:
                pass
            found = re.search(r"http://127\.0\.0\.1:\d+/\S*", "".join(self.seen))
            if found:
                try:
                    get(found.group())
                    return found.group()
                except OSError:
                    time.sleep(0.1)
            assert self.proc.poll() is None, "".join(self.seen)
        pytest.fail(f"no address within {timeout} s: {''.join(self.seen)}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def get(url: str, host: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[Server]:
    report = keras3_predict_report()
    hostile = FunctionStat("/app/" + HOSTILE + ".py", 1, HOSTILE, 11, 11, 0.01, 0.01)
    report = replace(report, profile=ProfileStats((*report.profile.functions, hostile)))
    json_path, prof_path = report.save(tmp_path / "my run")
    prof_path.unlink()  # served from the report itself: no .prof needed, none written
    (tmp_path / "tmp").mkdir()
    s = Server(json_path, _free_port(), tmp_path / "tmp")
    yield s
    s.stop()


def test_it_serves_the_reports_profile_and_nothing_else(server: Server, tmp_path: Path) -> None:
    url = server.url()
    status, page = get(url)
    assert status == 200 and "ArrayDataAdapter.get_tf_dataset" in page
    assert "<script>alert" not in page  # a function's name is data in the page, too
    base = f"http://127.0.0.1:{server.port}"
    for path in (
        "/snakeviz/%2Fetc",
        "/snakeviz/%2Froot",
        "/snakeviz/" + quote(str(tmp_path / "my run.tfdiag.json"), safe=""),
        "/snakeviz/..%2F..%2Fetc%2Fpasswd",
        "/static/",
        "/static/../../../../etc/passwd",
        "/etc/passwd",
    ):
        status, body = get(base + path)
        assert status in (403, 404), (path, status)
        assert "Traceback" not in body and "passwd" not in body and "bin" not in body, path
    assert get(base + "/static/snakeviz.js")[0] == 200


def test_it_refuses_another_host_name(server: Server) -> None:
    url = server.url()
    for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1.evil.example"):
        status, body = get(url, host=host)
        assert status == 403 and "ArrayDataAdapter" not in body, host
    assert get(url, host=f"localhost:{server.port}")[0] == 200


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(c) for c in text]
    return found


def test_the_server_goes_away_with_tfdiag(server: Server, tmp_path: Path) -> None:
    url = server.url()
    assert _children(server.proc.pid) == []  # no server process of its own to outlive it
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=10)
    with pytest.raises(OSError):
        get(url)
    assert list((tmp_path / "tmp").iterdir()) == []  # no temporary .prof left behind
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".prof"] == []


def test_a_busy_port_is_said_in_one_line(tmp_path: Path) -> None:
    json_path = keras3_predict_report().save(tmp_path / "run")[0]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "tfdiag", "snakeviz", str(json_path), "--no-browser"]
            + ["--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"port {port}" in lines[0] and "in use" in lines[0], proc.stderr


def test_without_a_port_a_busy_default_moves_and_says_where() -> None:
    from tfdiag.frontends.snakeviz_server import bind

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        sockets, bound, note = bind(port, move=True)
        try:
            assert bound != port and note is not None
            assert f"port {port} is in use" in note and str(bound) in note
        finally:
            for s in sockets:
                s.close()


def _headless_env(tmp: Path) -> dict[str, str]:
    """The environment of a machine with no browser, as Python's ``webbrowser`` sees one:
    no display (no graphical browser is tried), no terminal type (no console browser), no
    $BROWSER, and a PATH with nothing on it."""
    gone = {"DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "TERM"}
    empty = tmp / "bin"
    empty.mkdir(exist_ok=True)
    return {**{k: v for k, v in os.environ.items() if k not in gone}, "PATH": str(empty)}


@pytest.mark.parametrize("browser_var", [None, "/nonexistent/browser"])
def test_no_browser_is_one_line_and_it_still_serves(tmp_path: Path, browser_var: str) -> None:
    """Without --no-browser on a headless machine (#12): one line that names --no-browser,
    no usage text, no traceback; the address works. Also when $BROWSER names a browser that
    does not start."""
    json_path = keras3_predict_report().save(tmp_path / "run")[0]
    env = _headless_env(tmp_path)
    if browser_var:
        env["BROWSER"] = browser_var
    (tmp_path / "tmp").mkdir()
    s = Server(json_path, _free_port(), tmp_path / "tmp", browser=True, env=env)
    try:
        url = s.url()
        assert get(url)[0] == 200
        deadline = time.monotonic() + 10
        while "--no-browser" not in "".join(s.seen) and time.monotonic() < deadline:
            try:
                s.seen.append(s.lines.get(timeout=0.2))
            except queue.Empty:
                pass
        said = [line for line in s.seen if "browser" in line]
        assert len(said) == 1 and "--no-browser" in said[0], s.seen
        assert "usage" not in "".join(s.seen) and "Traceback" not in "".join(s.seen)
        assert s.proc.poll() is None  # still serving
    finally:
        s.stop()
