"""Headless Chromium for the HTML page's tests: the DOM after the page's scripts ran, and
every console message (errors included) the page produced.

``chromium --headless --dump-dom`` prints the DOM once the load event has fired (the
page's scripts run before it); ``--enable-logging=stderr --v=0`` writes each console
message, and each uncaught exception, as an ``INFO:CONSOLE`` line on stderr. No driver,
no websocket: Debian's ``chromium`` package only (``.ci/run`` installs it).

Also a script: ``python tests/browser.py screenshot PAGE.html OUT.png [WIDTHxHEIGHT]``.
"""

from __future__ import annotations

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


def load(page: Path, *, timeout: float = 60) -> Loaded:
    """Open ``page`` and return its rendered DOM and its console messages."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                chromium(),
                *_flags(profile),
                "--enable-logging=stderr",
                "--v=0",
                "--dump-dom",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = tuple(m.group(1) for m in CONSOLE.finditer(proc.stderr))
    return Loaded(proc.stdout, console)


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
