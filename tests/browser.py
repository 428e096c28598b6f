"""Headless Chromium for the HTML page's tests: the DOM after the page's scripts ran, every
console message (errors included) the page produced, and every request it made.

``chromium --headless --dump-dom`` prints the DOM once the load event has fired (the
page's scripts run before it; ``settle_ms`` lets timers and workers run on for that much
virtual time); ``--enable-logging=stderr --v=0`` writes each console message, and each
uncaught exception, as an ``INFO:CONSOLE`` line on stderr; ``--log-net-log`` writes
Chromium's NetLog, whose ``URL_REQUEST_START_JOB`` events are every URL loaded — the page's
own (its initiator is an origin, ``null`` for a file) apart from the browser's background
traffic (initiator ``not an origin``). Host names resolve to nothing
(``--host-resolver-rules``) but loopback, so a request a page tries is logged and goes
nowhere. No driver, no websocket: Debian's ``chromium`` package only (``.ci/run`` installs
it).

Also a script: ``python tests/browser.py screenshot PAGE.html OUT.png [WIDTHxHEIGHT]``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

CONSOLE = re.compile(r":CONSOLE[^\]]*\] ?(.*)")
NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str:
    """The browser's path; a clear failure (never a skip) when it is not installed."""
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError(
        "headless Chromium is needed for the HTML page's tests: apt-get install -y chromium "
        "(.ci/run installs it when missing)"
    )


@dataclass(frozen=True)
class Loaded:
    dom: str
    console: tuple[str, ...]
    #: every URL the page requested (itself excluded when opened from a file), in order
    requests: tuple[str, ...] = ()

    @property
    def off_machine(self) -> tuple[str, ...]:
        """The requests to anywhere but this machine (not file:, data:, blob: or loopback)."""
        return tuple(u for u in self.requests if not LOCAL.match(u))


#: A URL that does not leave the machine.
LOCAL = re.compile(r"(?:file|data|blob|about|chrome):|https?://(?:127\.0\.0\.1|localhost)[:/]")


def _requests(net_log: Path) -> tuple[str, ...]:
    """The URLs the page loaded, from a NetLog (the browser's own traffic left out)."""
    try:
        doc = json.loads(net_log.read_text())
    except json.JSONDecodeError:  # Chromium killed mid-write leaves the closing brackets off
        doc = json.loads(net_log.read_text().rstrip().rstrip(",") + "]}")
    start = doc["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    found = []
    for event in doc["events"]:
        params = event.get("params") or {}
        if event["type"] == start and "url" in params:
            if params.get("initiator") != "not an origin":
                found.append(str(params["url"]))
    return tuple(found)


def _flags(profile: str) -> list[str]:
    return [
        "--headless",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        f"--user-data-dir={profile}",
    ]


def load(page: Path | str, *, timeout: float = 60, settle_ms: int = 0) -> Loaded:
    """Open ``page`` (a file, or a URL) and return its rendered DOM, its console messages and
    the URLs it requested; ``settle_ms``: virtual milliseconds to let it run after loading."""
    url = page if isinstance(page, str) else page.resolve().as_uri()
    with tempfile.TemporaryDirectory() as profile:
        net_log = Path(profile) / "net-log.json"
        proc = subprocess.run(
            [
                chromium(),
                *_flags(profile),
                "--enable-logging=stderr",
                "--v=0",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
                f"--log-net-log={net_log}",
                *([f"--virtual-time-budget={settle_ms}"] if settle_ms else []),
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        requests = _requests(net_log) if net_log.exists() else ()
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = tuple(m.group(1) for m in CONSOLE.finditer(proc.stderr))
    return Loaded(proc.stdout, console, requests)


def screenshot(page: Path, out: Path, size: str = "1200,2400", *, timeout: float = 60) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chromium(),
                *_flags(profile),
                "--hide-scrollbars",
                f"--window-size={size}",
                f"--screenshot={out.resolve()}",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            check=True,
            timeout=timeout,
        )


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5) or sys.argv[1] != "screenshot":
        raise SystemExit(__doc__)
    screenshot(Path(sys.argv[2]), Path(sys.argv[3]), *(sys.argv[4:5] or ["1200,2400"]))


def scroll_width(page: Path, width: int, *, timeout: float = 60) -> int:
    """The page's ``document.documentElement.scrollWidth`` in a ``width``-px window: a copy of
    the page without its Content-Security-Policy gets one script that writes it into the DOM."""
    html = page.read_text(encoding="utf-8")
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    probe = (
        "<script>addEventListener('load', () => document.body.setAttribute('data-scroll-width',"
        " document.documentElement.scrollWidth))</script></body>"
    )
    copy = page.with_name(page.stem + ".width.html")
    copy.write_text(html.replace("</body>", probe), encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                chromium(),
                *_flags(profile),
                f"--window-size={width},1000",
                "--virtual-time-budget=1000",
                "--dump-dom",
                copy.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    m = re.search(r'data-scroll-width="(\d+)"', proc.stdout)
    assert m, proc.stderr[-2000:]
    return int(m.group(1))


def clicked(page: Path, selector: str, *, timeout: float = 60) -> Loaded:
    """The DOM after the first element matching ``selector`` was clicked once the page
    loaded, with ``navigator.clipboard.writeText`` recording what it was given as JSON in
    ``<body data-clipboard>`` (a headless browser has no clipboard to read back). The
    page's Content-Security-Policy is kept: its own inline scripts must work under it."""
    html = page.read_text(encoding="utf-8")
    probe = (
        "<script>addEventListener('load', () => {"
        "Object.defineProperty(navigator, 'clipboard', {value: {writeText: (t) => {"
        "document.body.setAttribute('data-clipboard', JSON.stringify(t));"
        "return Promise.resolve(); }}});"
        f"document.querySelector({json.dumps(selector)}).click(); }})</script></body>"
    )
    copy = page.with_name(page.stem + ".click.html")
    copy.write_text(html.replace("</body>", probe), encoding="utf-8")
    return load(copy, timeout=timeout, settle_ms=1000)
