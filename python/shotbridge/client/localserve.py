"""Serve one local page to the browser for the length of a capture, sealed like a ``file://`` page.

Extensions may not script ``file://`` pages unless the user flips "Allow access to file URLs", so a
local HTML file is served instead. Chrome gives a ``file://`` page an opaque origin that cannot read
its neighbours; the served copy must be no weaker. So:

* every response carries ``Content-Security-Policy: sandbox`` without ``allow-same-origin``: the
  page (and any document it opens or frames) runs in an opaque origin, so the server's answers are
  cross-origin to it and ``fetch``/XHR cannot read them;
* requests are judged by ``Sec-Fetch-Dest``, which a page cannot forge: the page itself as a
  document; its scripts, styles, fonts, images and media as subresources; nothing else (``fetch``
  and XHR are ``empty``, frames are ``iframe``/``frame``, plug-ins ``object``/``embed``: all 404).
  A request without the header (not a browser) gets the file with no CORS grant;
* ``Access-Control-Allow-Origin: null`` only where the opaque page needs it to *use* a file: a
  JavaScript file for a script (module scripts are CORS requests), a stylesheet for a style, a
  font file for a font. Never for an image (a CORS image could be read back from a canvas), never
  for a type that does not match its use; with ``nosniff`` a ``.txt`` cannot run as a script;
* only files at or beneath the page's folder, judged by the file they reach: symlinks are resolved
  and must stay inside; a hard link's other names cannot be known, so a file with more than one
  (``st_nlink > 1``) is refused — it may be ``~/.ssh/id_rsa`` under another name;
* never a dotfile, and nothing with a dot-directory anywhere on its resolved path (a page inside
  ``~/.cache/x/`` gets itself, not its siblings);
* never a directory listing (a directory answers 404, even with an ``index.html``);
* only under an unguessable prefix (``secrets.token_urlsafe``): the port is visible to every local
  process, the prefix only to the browser we hand the URL to, so another process gets 404;
* GET and HEAD only, loopback only, and only while the ``with`` block runs.

The page itself is always served (even a dotfile or a hard link: the user chose it).
"""

from __future__ import annotations

import mimetypes
import os
import secrets
import stat
import sys
import threading
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

CHUNK = 64 * 1024

# The sandbox of every response: scripts, forms, dialogs and popups keep working (a popup inherits
# the sandbox); same-origin, top navigation and downloads are what a sealed page must not have.
SANDBOX = "sandbox allow-scripts allow-forms allow-modals allow-popups allow-pointer-lock"

# Sec-Fetch-Dest values of the loads a page makes to render itself.
SUBRESOURCES = frozenset({"script", "style", "font", "image", "audio", "video", "track"})
FONT_TYPES = frozenset({"font/woff", "font/woff2", "font/ttf", "font/otf", "font/collection"})
FONT_SUFFIXES = frozenset({".woff", ".woff2", ".ttf", ".otf", ".ttc"})
SCRIPT_TYPES = frozenset({"text/javascript", "application/javascript"})
SCRIPT_SUFFIXES = frozenset({".js", ".mjs"})


@dataclass(frozen=True)
class Verdict:
    """Whether a request is answered, and whether the opaque page may use the answer via CORS."""

    serve: bool
    cors: bool = False


REFUSE = Verdict(serve=False)


def content_type(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in SCRIPT_SUFFIXES:
        return "text/javascript"
    if suffix in FONT_SUFFIXES:
        return "font/" + {".ttc": "collection"}.get(suffix, suffix[1:])
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def judge(dest: str | None, is_page: bool, kind: str) -> Verdict:
    """What to do with a request for a file of ``kind`` (its Content-Type) used as ``dest``.

    ``dest`` is the request's ``Sec-Fetch-Dest`` (None when absent); ``is_page`` says it names the
    captured page itself.
    """
    if dest is None:
        return Verdict(serve=True)  # not a browser's request: bytes, but no grant to any page
    if dest == "document":
        return Verdict(serve=is_page)
    if dest not in SUBRESOURCES:
        return REFUSE  # fetch/XHR ("empty"), frames, object/embed, workers, json imports…
    cors = (
        (dest == "script" and kind in SCRIPT_TYPES)
        or (dest == "style" and kind == "text/css")
        or (dest == "font" and kind in FONT_TYPES)
    )
    return Verdict(serve=True, cors=cors)


def _dotted(path: Path) -> bool:
    return any(part.startswith(".") for part in path.parts)


def resolve_inside(root: Path, relative: str) -> Path | None:
    """The file ``relative`` (URL path below the prefix) names under ``root``, or None.

    None for: an empty path, any dot segment (``.env``, ``.git/x``, ``..``), a NUL or backslash,
    a path that resolves (symlinks followed) outside ``root`` or through a dot-directory anywhere
    (``root`` itself included), anything that is not a regular file, and a file with more than one
    hard link (its other names are unknowable, so it cannot be shown to live only here).
    """
    parts = [p for p in unquote(relative).split("/") if p]
    if not parts or any(p.startswith(".") or "\0" in p or "\\" in p for p in parts):
        return None
    try:
        target = root.joinpath(*parts).resolve(strict=True)
        info = target.stat()
    except (OSError, RuntimeError):  # missing, or a symlink loop
        return None
    if not target.is_relative_to(root) or _dotted(target):
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
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
        is_page = unquote(rel) == page.name
        target = page if is_page else resolve_inside(self.server.root, rel)
        if target is None:
            self._refuse(HTTPStatus.NOT_FOUND)
            return
        kind = content_type(target)
        verdict = judge(self.headers.get("Sec-Fetch-Dest"), is_page, kind)
        if not verdict.serve:
            self._refuse(HTTPStatus.NOT_FOUND)
            return
        try:
            fh = target.open("rb")
        except OSError:
            self._refuse(HTTPStatus.NOT_FOUND)
            return
        with fh:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(os.fstat(fh.fileno()).st_size))
            if verdict.cors:
                self.send_header("Access-Control-Allow-Origin", "null")
            self._seal()
            self.end_headers()
            while body and (chunk := fh.read(CHUNK)):
                self.wfile.write(chunk)

    def _seal(self) -> None:
        self.send_header("Content-Security-Policy", SANDBOX)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Vary", "Sec-Fetch-Dest")

    def _refuse(self, status: HTTPStatus) -> None:
        # No body that could echo the path back: the same empty 404 for every refusal.
        self.send_response(status)
        self.send_header("Content-Length", "0")
        if status == HTTPStatus.METHOD_NOT_ALLOWED:
            self.send_header("Allow", "GET, HEAD")
        self._seal()
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

    def handle_error(self, request: object, client_address: object) -> None:
        # A browser that navigates away mid-transfer closes its socket: that is not an error
        # worth a traceback on the user's terminal.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


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
