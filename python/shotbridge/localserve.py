"""Serve one local page to the browser for the length of a capture, and nothing else.

Extensions may not script ``file://`` pages unless the user flips "Allow access to file URLs", so a
local HTML file is served instead. What the server gives out is the least the page needs:

* only files at or beneath the page's folder (paths are resolved, symlinks included, and must stay
  inside it: no ``..`` or symlink escapes);
* never a dotfile or anything inside a dot-directory (``.env``, ``.git/config``, ``.ssh/…``);
* never a directory listing (a directory answers 404, even with an ``index.html``);
* only under an unguessable prefix (``secrets.token_urlsafe``): the port is visible to every local
  process, the prefix only to the browser we hand the URL to, so another process gets 404;
* GET and HEAD only, loopback only, and only while the ``with`` block runs.

Files beneath the folder without a dot (``assets/app.js``, even ``private/notes.txt``) are served to
the page: that is how a page loads its own assets. Keep secrets out of the page's folder or in
dot-directories.
"""

from __future__ import annotations

import mimetypes
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

CHUNK = 64 * 1024


def resolve_inside(root: Path, relative: str) -> Path | None:
    """The file ``relative`` (URL path below the prefix) names under ``root``, or None.

    None for: an empty path, any dot segment (``.env``, ``.git/x``, ``..``), a NUL, a path that
    resolves (symlinks followed) outside ``root``, or anything that is not a regular file.
    """
    parts = [p for p in unquote(relative).split("/") if p]
    if not parts or any(p.startswith(".") or "\0" in p or "\\" in p for p in parts):
        return None
    try:
        target = root.joinpath(*parts).resolve(strict=True)
    except (OSError, RuntimeError):  # missing, or a symlink loop
        return None
    if not target.is_relative_to(root) or not target.is_file():
        return None
    # A symlink inside the folder may point to a dotfile elsewhere in the folder: check again.
    if any(p.startswith(".") for p in target.relative_to(root).parts):
        return None
    return target


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "shotbridge"
    sys_version = ""

    def do_GET(self) -> None:
        self._serve(body=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def _serve(self, body: bool) -> None:
        path = urlsplit(self.path).path
        prefix = self.server.prefix
        if not path.startswith(prefix):
            self._refuse(HTTPStatus.NOT_FOUND)
            return
        rel = path[len(prefix) :]
        # The page itself is served by name, even if the user chose a dotfile to capture.
        page = self.server.page
        target = page if unquote(rel) == page.name else resolve_inside(self.server.root, rel)
        if target is None:
            self._refuse(HTTPStatus.NOT_FOUND)
            return
        try:
            fh = target.open("rb")
        except OSError:
            self._refuse(HTTPStatus.NOT_FOUND)
            return
        with fh:
            size = target.stat().st_size
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(size))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            while body and (chunk := fh.read(CHUNK)):
                self.wfile.write(chunk)

    def _refuse(self, status: HTTPStatus) -> None:
        # No body that could echo the path back: the same empty 404 for every refusal.
        self.send_response(status)
        self.send_header("Content-Length", "0")
        if status == HTTPStatus.METHOD_NOT_ALLOWED:
            self.send_header("Allow", "GET, HEAD")
        self.end_headers()

    def _not_allowed(self) -> None:
        self._refuse(HTTPStatus.METHOD_NOT_ALLOWED)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, page: Path, prefix: str) -> None:
        self.page = page
        self.root = page.parent
        self.prefix = prefix
        super().__init__(("127.0.0.1", 0), _Handler)


class LocalServer:
    """``with LocalServer(page) as url:`` gives an http://127.0.0.1 URL for one local HTML file.

    A folder is served through its ``index.html``. ``url`` looks like
    ``http://127.0.0.1:PORT/<token>/page.html``; the same server answers 404 to everything else.
    """

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self.page = self.path / "index.html" if self.path.is_dir() else self.path
        self.root = self.page.parent
        self.prefix = f"/{secrets.token_urlsafe(24)}/"
        self._server: _Server | None = None

    @property
    def origin(self) -> str:
        if self._server is None:
            raise RuntimeError("LocalServer is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> str:
        self._server = _Server(self.page, self.prefix)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"{self.origin}{self.prefix}{quote(self.page.name)}"

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
