"""Serve one local folder to the browser for the length of a capture.

Extensions may not script ``file://`` pages unless the user flips "Allow access to file URLs", so a
local HTML file is served instead: loopback only, an ephemeral port, read-only, and only for the
one command that asked (the bus itself never listens on TCP).
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class LocalServer:
    """``with LocalServer(path) as url:`` gives an http://127.0.0.1 URL for a local file."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> str:
        root = self.path.parent if self.path.is_file() else self.path
        handler = functools.partial(_QuietHandler, directory=str(root))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        port = self._server.server_address[1]
        name = quote(self.path.name) if self.path.is_file() else ""
        return f"http://127.0.0.1:{port}/{name}"

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
