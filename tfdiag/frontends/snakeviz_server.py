"""tfdiag's own snakeviz server: snakeviz's page and static files for one profile, in this
process, on 127.0.0.1.

snakeviz's own handler serves any path named in its URL (``/snakeviz/%2Fetc`` lists
``/etc``, any file is unmarshalled), shows tracebacks and answers any ``Host``. This
server renders snakeviz's template once, from the report's profile held in memory (no
temporary ``.prof``), with the data embedded as script-safe JSON, and serves exactly that
page, snakeviz's static files, and nothing else; the page loads nothing from anywhere else
(its worker's libraries included, :data:`POLICY`). Requests whose ``Host`` is not
127.0.0.1 or localhost (a DNS-rebinding page) get 403; errors are one short line. It runs
in tfdiag's own process, so it ends when tfdiag does, however tfdiag ends.
"""

from __future__ import annotations

import asyncio
import errno
import json
import pstats
import re
import socket
import threading
import webbrowser
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from tfdiag.records.errors import InputError
from tfdiag.records.stats import ProfileStats
from tfdiag.records.text import json_for_script

HOST = "127.0.0.1"
#: ``Host`` names a request may carry (with any port): the loopback address and its name.
ALLOWED_HOSTS = frozenset({"127.0.0.1", "localhost"})
#: With no ``--port`` given, a busy default moves up by at most this many.
PORTS_TRIED = 10


class _Stats:
    """What ``pstats.Stats`` reads a profile from, without a file."""

    def __init__(self, stats: ProfileStats) -> None:
        self.stats: dict[Any, Any] = stats.to_pstats()

    def create_stats(self) -> None:
        pass


def viz_page(stats: ProfileStats, name: str) -> bytes:
    """snakeviz's ``viz.html`` for ``stats``: its tables as JSON no string can break out of."""
    import tornado.template
    from snakeviz.main import settings
    from snakeviz.stats import json_stats, table_rows

    s = pstats.Stats(_Stats(stats))  # type: ignore[arg-type]
    loader = tornado.template.Loader(settings["template_path"])
    rows = json_for_script(json.dumps(table_rows(s), allow_nan=False))
    callees = json_for_script(json.dumps(json_stats(s), allow_nan=False))
    page: bytes = loader.load("viz.html").generate(
        profile_name=name, table_rows=rows, callees=callees
    )
    # its worker first tries the libraries from cdnjs, then this server: this server only
    return _CDN.sub(b"event.data['url'] + \"/static/vendor/\\1\"", page)


#: snakeviz's worker script loads immutable and lodash from cdnjs.cloudflare.com "in case
#: the snakeviz server is off": opening the page told cdnjs it was opened (#20.13). The same
#: files are in snakeviz's ``static/vendor/``, served here; and the page's
#: Content-Security-Policy (:data:`POLICY`) allows nothing but this server.
_CDN = re.compile(rb'"https://cdnjs\.cloudflare\.com/ajax/libs/[^"]*/([A-Za-z0-9_.-]+\.js)"')
#: What the page may load: its own scripts (inline, from /static, the worker built from a
#: blob), styles and images from this server; no other origin.
POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; "
    "worker-src 'self' blob:; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


def host_allowed(host: str) -> bool:
    """``Host: 127.0.0.1:8080`` or ``localhost``: yes; any other name: no."""
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name.lower() in ALLOWED_HOSTS


def bind(port: int, *, move: bool) -> tuple[list[socket.socket], int, str | None]:
    """Listening sockets on 127.0.0.1: ``port``, or (``move``) the next free one, with a note
    that says so.

    Raises:
        InputError: the port is in use (and ``move`` is off, or no port near it is free).
    """
    from tornado.netutil import bind_sockets

    for candidate in range(port, min(port + (PORTS_TRIED if move else 1), 65536)):
        try:
            sockets = bind_sockets(candidate, address=HOST, family=socket.AF_INET)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise InputError(f"cannot listen on {HOST}:{candidate}: {exc.strerror}") from None
            continue
        note = None if candidate == port else f"port {port} is in use; serving on {candidate}"
        return sockets, candidate, note
    if move:
        raise InputError(f"ports {port}–{port + PORTS_TRIED - 1} on {HOST} are all in use")
    raise InputError(f"port {port} on {HOST} is in use by another program; pass another --port")


def application(page: bytes, path: str) -> Any:
    """The tornado app: ``path`` is the page, ``/`` redirects to it, ``/static/`` holds
    snakeviz's files; everything else is 404."""
    import tornado.web
    from snakeviz.main import settings

    class Guarded(tornado.web.RequestHandler):
        def prepare(self) -> None:
            if not host_allowed(self.request.host):
                raise tornado.web.HTTPError(403)

        def set_default_headers(self) -> None:
            self.set_header("X-Content-Type-Options", "nosniff")
            self.set_header("X-Frame-Options", "DENY")
            self.set_header("Referrer-Policy", "no-referrer")
            self.set_header("Content-Security-Policy", POLICY)

        def write_error(self, status_code: int, **kwargs: Any) -> None:
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(f"{status_code} {self._reason}\n")  # never a traceback

    class Page(Guarded):
        def get(self) -> None:
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.finish(page)

    class Home(Guarded):
        def get(self) -> None:
            self.redirect(path)

    class Static(Guarded, tornado.web.StaticFileHandler):
        pass

    class NotFound(Guarded):
        def prepare(self) -> None:
            super().prepare()
            raise tornado.web.HTTPError(404)

    return tornado.web.Application(
        [
            (r"/", Home),
            (re.escape(path) + "$", Page),
            (r"/static/(.*)", Static, {"path": settings["static_path"]}),
        ],
        default_handler_class=NotFound,
        debug=False,
        serve_traceback=False,
        autoreload=False,
        compress_response=True,
    )


def page_path(name: str) -> str:
    return "/snakeviz/" + quote(name, safe="")


#: Said when no browser opens: one line, and the server keeps serving (headless machines,
#: SSH sessions: the address is what the user needs, with a port forward).
NO_BROWSER = (
    "no browser to open it here — open the address yourself, or pass --no-browser "
    "to serve without trying"
)


def open_browser(url: str, say: Callable[[str], None]) -> None:
    """Open ``url`` in the user's browser, in a thread (a console browser named by $BROWSER
    blocks until it quits); when Python's :mod:`webbrowser` finds none, or none starts,
    ``say`` gets :data:`NO_BROWSER`."""
    try:
        webbrowser.get()
    except webbrowser.Error:
        say(NO_BROWSER)
        return

    def run() -> None:
        if not webbrowser.open(url, new=2):
            say(NO_BROWSER)

    threading.Thread(target=run, daemon=True).start()


def serve(
    stats: ProfileStats,
    name: str,
    *,
    port: int,
    move: bool,
    browser: bool,
    say: Callable[[str], None],
) -> int:
    """Serve ``stats`` until Ctrl-C; ``say`` gets the address line (and a moved-port note)."""
    path = page_path(name)
    app = application(viz_page(stats, name), path)
    sockets, bound, note = bind(port, move=move)
    url = f"http://{HOST}:{bound}{path}"
    if note:
        say(note)
    say(
        f"snakeviz for {name}: {url} — bound to {HOST} only, serving this profile only "
        "(Ctrl-C stops it)"
    )
    if browser:
        open_browser(url, say)

    async def run() -> None:
        from tornado.httpserver import HTTPServer

        server = HTTPServer(app)
        server.add_sockets(sockets)
        await asyncio.Event().wait()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0
