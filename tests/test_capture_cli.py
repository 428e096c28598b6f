"""``tfdiag capture``'s bad inputs, which it refuses before tracing (no TensorFlow needed),
and the step cycles it reads off a trace's events."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from conftest import run_cli_without_tensorflow
from distlab import free_ports

from tfdiag.analysis.xprof import step_cycles
from tfdiag.capture import remote
from tfdiag.capture.remote import capture_paths, parse_addresses
from tfdiag.records.errors import InputError

PS = 10**12


def test_step_cycles_from_step_and_step_function_events() -> None:
    # three batches at 0, 62 and 124 ms; the step function is the first 8 ms of each
    steps = [
        (124 * PS // 1000, 60 * PS // 1000),
        (0, 60 * PS // 1000),
        (62 * PS // 1000, 60 * PS // 1000),
    ]
    inner = [(1 * PS // 1000, 8 * PS // 1000), (63 * PS // 1000, 8 * PS // 1000)]
    cycles, fns = step_cycles(steps, inner)
    assert cycles == pytest.approx((0.062, 0.062))
    assert fns == pytest.approx((0.008, 0.008))
    # no step-function events: the whole step counts
    assert step_cycles(steps, [])[1] == pytest.approx((0.06, 0.06))
    assert step_cycles(steps[:1], inner) == ((), ())


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "comma-separated"),
        ("grpc://127.0.0.1:6009,", "comma-separated"),
        ("grpc://127.0.0.1", "not a profiler address"),
        ("grpc://127.0.0.1:70000", "not a profiler address"),
        ("http://127.0.0.1:6009", "not a profiler address"),
        ("grpc://127.0.0.1:6009,127.0.0.1:6009", "given twice"),
        ("grpc://127.0.0.1:6009,127.1:6009", "given twice"),  # one server, two spellings
        ("127.0.0.1:6009,grpc://localhost:6009", "given twice"),
        ("127.0.0.1:6009,2130706433:6009", "given twice"),
    ],
)
def test_bad_addresses(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_addresses(text)


def test_addresses_in_worker_order() -> None:
    found = parse_addresses("grpc://10.0.0.2:6009, 10.0.0.1:6010,grpc://[::1]:6011")
    assert [a.url for a in found] == [
        "grpc://10.0.0.2:6009",
        "grpc://10.0.0.1:6010",
        "grpc://[::1]:6011",
    ]
    assert found[2].file_stem == "::1_6011"


def test_capture_paths() -> None:
    merged, workers = capture_paths("out/job", 2)
    assert merged == Path("out/job.tfdiag.json")
    assert workers == (Path("out/job.w0.tfdiag.json"), Path("out/job.w1.tfdiag.json"))


def test_an_unreachable_address_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    port = free_ports(1)[0]  # nothing listens there
    out = tmp_path / "job"
    proc = run_cli_without_tensorflow(
        "capture", f"grpc://127.0.0.1:{port}", "--duration-ms", "500", "--out", str(out)
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot reach grpc://127.0.0.1:{port}" in lines[0]
    assert "server.start" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_two_ports_of_one_host_are_two_workers() -> None:
    assert len(parse_addresses("127.0.0.1:6009,127.1:6010")) == 2


@pytest.mark.tf
def test_a_listener_that_is_not_a_profiler_server_is_given_up_after_the_stated_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """#20.16: a TCP listener that accepts and never answers made a 200 ms capture wait
    75-77 s; the wait is the duration plus TRACE_MARGIN_S (made 2 s here), counted from
    when TensorFlow has loaded in the trace's process."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])  # accepted, never answered
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    monkeypatch.setattr(remote, "TRACE_MARGIN_S", 2.0)
    address = f"127.0.0.1:{server.getsockname()[1]}"
    started = time.monotonic()
    try:
        with pytest.raises(InputError, match="within 2.2 s") as info:
            remote.capture(parse_addresses(address), duration_ms=200)
    finally:
        stop.set()
        thread.join()
        for s in (*held, server):
            s.close()
    assert "\n" not in str(info.value) and "profiler server" in str(info.value)
    assert time.monotonic() - started < 60  # TensorFlow's own wait was 75 s
