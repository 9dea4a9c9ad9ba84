"""Hand the dashboard out with Python's own http.server, or write it to a file.

The page is built again for every request of `/`, so a reload shows results written
since; plotly.js (4.8 MB) is handed out once at `/plotly.min.js` for the browser to
cache. Nothing else is served: the results folder itself is not exposed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from plotly.offline import get_plotlyjs

from contest.dashboard.blocks import GENERATOR
from contest.dashboard.load import load
from contest.dashboard.page import render
from contest.errors import UsageError

PLOTLY_PATH = "/plotly.min.js"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def build(results: Path, plotly_src: str | None = None, local: Path | None = None) -> str:
    """The page of `results` (published) beside `local` (this machine's own runs)."""
    if not results.is_dir():
        raise UsageError(f"results folder not found: {results}")
    loaded = load(results, local)
    try:
        return render(loaded, now(), plotly_src)
    finally:
        loaded.con.close()


def write_page(results: Path, out: Path, local: Path | None = None) -> Path:
    """A page that needs nothing else (plotly.js inside), to archive or mail. An existing
    file is replaced only when it is such a page, never a file of someone else's."""
    if out.is_dir():
        raise UsageError(f"--out names a folder, not a file: {out}")
    if out.exists():
        head = out.read_bytes()[:2048].decode("utf-8", errors="replace")
        if f'<meta name="generator" content="{GENERATOR}">' not in head:
            raise UsageError(f"{out} exists and is not a page this command wrote: not replacing it")
    page = build(results, local=local)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return out


def handler(results: Path, local: Path | None = None) -> type[BaseHTTPRequestHandler]:
    plotly_js = get_plotlyjs().encode("utf-8")

    class Handler(BaseHTTPRequestHandler):
        server_version = "contest-dashboard"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._answer(send_body=True)

        def do_HEAD(self) -> None:  # noqa: N802
            self._answer(send_body=False)

        def _answer(self, send_body: bool) -> None:
            path = self.path.split("?", 1)[0]
            if path in ("/", "/index.html"):
                try:
                    body = build(results, PLOTLY_PATH[1:], local).encode("utf-8")
                except UsageError as exc:
                    self._send(HTTPStatus.NOT_FOUND, str(exc).encode(), "text/plain", send_body)
                    return
                self._send(HTTPStatus.OK, body, "text/html; charset=utf-8", send_body, cache=False)
            elif path == PLOTLY_PATH:
                self._send(HTTPStatus.OK, plotly_js, "text/javascript", send_body, cache=True)
            else:
                self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain", send_body)

        def _send(
            self, status: HTTPStatus, body: bytes, ctype: str, send_body: bool, cache: bool = False
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "max-age=3600" if cache else "no-store")
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass  # one line per request would drown the address printed at the start

    return Handler


def serve(
    results: Path,
    host: str,
    port: int,
    ready: Callable[[str], None] = lambda url: None,
    local: Path | None = None,
) -> None:
    """Serve until interrupted; `ready` gets the address once the port is bound."""
    build(results, local=local)  # a bad results folder fails here, before the port opens
    try:
        server = ThreadingHTTPServer((host, port), handler(results, local))
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    ready(f"http://{shown}:{bound_port}/")
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
