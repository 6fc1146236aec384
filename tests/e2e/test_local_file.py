"""``shotctl capture FILE`` in real Chromium: the page gets its own assets, and reads nothing.

Chrome gives a ``file://`` page an opaque origin that cannot read its neighbours; the served copy
must be no weaker. The captured page tries what the security review's pages did: read
``private/key.txt`` (a hard link to a file outside the folder), ``../secret.txt``, ``.env`` and the
folder listings with fetch (cors and no-cors), XHR, an iframe and an ``<object>``; a page inside a
dot-directory reads its sibling. At the same time it must still load its own classic and module
script, stylesheet, image and web font. The page writes what it got into its title; an image from
the test's own server holds the load event (and so the capture) until the page has reported.
While the page waits, the test plays "another local process": it asks the capture's server for the
same files without the URL prefix.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from PIL import Image

HOLD_S = 10  # the longest the test's server holds the load event (the capture allows 20 s)

PAGE = """<!doctype html>
<meta charset=utf-8>
<title>loading</title>
<link rel=stylesheet href="assets/style.css">
<script src="assets/classic.js"></script>
<script type=module src="assets/module.js"></script>
<p id=styled>Probe text</p>
<img id=pic src="assets/pic.png">
<iframe id=frame src="private/key.txt"></iframe>
<object id=obj data="private/notes.txt" type="text/plain"></object>
<img src="OUTSIDER/hold" alt="">
<script>
function status(path) {
  const xhr = new XMLHttpRequest();
  try {
    xhr.open('GET', path, false);  // synchronous: no event loop turn needed
    xhr.send();
    return xhr.status + ':' + xhr.responseText;
  } catch (e) {
    return 'error';
  }
}
const origin = location.origin;
window.got = {
  origin: String(self.origin),
  xhr_hardlink: status('private/key.txt'),
  xhr_notes: status('private/notes.txt'),
  xhr_parent: status('../secret.txt'),
  xhr_parent_encoded: status('%2e%2e/secret.txt'),
  xhr_env: status('.env'),
  xhr_listing: status('./'),
  xhr_root_listing: status(origin + '/'),
};
// "Another local process" probes the server now, while this page is still loading.
window.got.outsider = status('OUTSIDER/probe?origin=' + encodeURIComponent(origin));
</script>
<script type=module>
const got = window.got;
const read = (path, init) =>
  fetch(path, init).then(r => r.text().then(t => r.type + ':' + r.status + ':' + t),
                         e => 'error');
const frameText = (el) => {
  try {
    const doc = el.contentDocument;
    return doc ? 'read:' + doc.documentElement.textContent : 'closed';
  } catch (e) {
    return 'closed';
  }
};
got.fetch_hardlink = await read('private/key.txt');
got.fetch_notes = await read('private/notes.txt');
got.fetch_notes_nocors = await read('private/notes.txt', {mode: 'no-cors'});
got.fetch_script_as_data = await read('assets/module.js');
await new Promise(r => setTimeout(r, 300));  // let the frame and the object settle
got.iframe = frameText(document.getElementById('frame'));
got.object = frameText(document.getElementById('obj'));
got.classic_script = window.classicRan === true;
got.module_script = window.moduleRan === 'dep';
got.style = getComputedStyle(document.getElementById('styled')).color;
const pic = document.getElementById('pic');
got.image = await pic.decode().then(() => pic.naturalWidth, () => 0);
got.font = (await document.fonts.load('16px Probe')).length;
document.title = JSON.stringify(got);
await fetch('OUTSIDER/report', {method: 'POST', mode: 'no-cors', body: document.title});
</script>
"""

DOT_PAGE = """<!doctype html>
<title>loading</title>
<script>
function status(path) {
  const xhr = new XMLHttpRequest();
  try { xhr.open('GET', path, false); xhr.send(); return xhr.status; } catch (e) { return 'error'; }
}
document.title = JSON.stringify({sibling: status('id_rsa'), nested: status('keys/deploy.pem')});
</script>
"""


@dataclass
class Outsider:
    """The test's own server: the probe from "another process", the hold and the report."""

    url: str = ""
    seen: dict[str, int | str] = field(default_factory=dict)
    reported: threading.Event = field(default_factory=threading.Event)


class _OutsiderHandler(BaseHTTPRequestHandler):
    def __init__(self, state: Outsider, *args: Any) -> None:
        self.state = state
        super().__init__(*args)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/probe":
            origin = parse_qs(parts.query).get("origin", [""])[0]
            for path in ("/", "/page.html", "/private/notes.txt", "/.env", "/assets/style.css"):
                self.state.seen[path] = _status(origin + path)
        elif parts.path == "/hold":
            self.state.reported.wait(HOLD_S)
        self._empty()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.state.reported.set()
        self._empty()

    def _empty(self) -> None:
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def _status(url: str) -> int | str:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError as exc:
        return type(exc).__name__


@pytest.fixture
def outsider() -> Iterator[Outsider]:
    state = Outsider()
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_OutsiderHandler, state))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def _font() -> Path:
    """A TrueType font of the system's (Debian's Chromium depends on fonts-dejavu or similar)."""
    for root in (Path("/usr/share/fonts"), Path("/usr/local/share/fonts")):
        found = sorted(root.rglob("*.ttf")) if root.is_dir() else []
        if found:
            return found[0]
    raise AssertionError("no .ttf font on this system for the web-font check")


def _capture(page: Path, out: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "shotbridge", "capture", str(page),
         "--browser", "headless", "-o", str(out), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _site(tmp_path: Path, outsider_url: str) -> Path:
    (tmp_path / "secret.txt").write_text("outside")
    (tmp_path / "outside_key.txt").write_text("HARDLINKED-KEY")
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "private").mkdir()
    os.link(tmp_path / "outside_key.txt", site / "private" / "key.txt")
    (site / "private" / "notes.txt").write_text("NOTES-SECRET")
    (site / ".env").write_text("API_KEY=sk_live_1")
    (site / "assets" / "style.css").write_text(
        "@font-face { font-family: Probe; src: url(probe.ttf); }\n"
        "#styled { color: rgb(1, 2, 3); font-family: Probe; }\n"
    )
    (site / "assets" / "classic.js").write_text("window.classicRan = true;\n")
    (site / "assets" / "module.js").write_text(
        "import { name } from './dep.js';\nwindow.moduleRan = name;\n"
    )
    (site / "assets" / "dep.js").write_text("export const name = 'dep';\n")
    shutil.copyfile(_font(), site / "assets" / "probe.ttf")
    Image.new("RGB", (7, 5), (200, 30, 30)).save(site / "assets" / "pic.png")
    (site / "page.html").write_text(PAGE.replace("OUTSIDER", outsider_url))
    return site


def test_a_served_page_loads_its_assets_and_reads_no_file(
    tmp_path: Path, outsider: Outsider
) -> None:
    site = _site(tmp_path, outsider.url)
    meta = _capture(site / "page.html", tmp_path / "shot.jpg")
    assert outsider.reported.is_set(), meta["title"]
    got = json.loads(meta["title"])
    print("GOT", got)
    # What a page needs to render itself loads: scripts (classic and module), style, image, font.
    assert got["classic_script"] is True
    assert got["module_script"] is True
    assert got["style"] == "rgb(1, 2, 3)"
    assert got["image"] == 7
    assert got["font"] == 1
    # An opaque origin, like file://.
    assert got["origin"] == "null"
    # Nothing else can be read: every answer is a refusal, an error or opaque.
    assert got["xhr_hardlink"] == "error"
    assert got["xhr_notes"] == "error"
    for key in ("xhr_parent", "xhr_parent_encoded", "xhr_env", "xhr_listing", "xhr_root_listing"):
        assert got[key] == "error", key
    assert got["fetch_hardlink"] == "error"
    assert got["fetch_notes"] == "error"
    assert got["fetch_notes_nocors"] == "opaque:0:"
    assert got["fetch_script_as_data"] == "error"  # its own script runs; it cannot be read
    assert got["iframe"] == "closed"
    assert got["object"] == "closed"
    assert "KEY" not in meta["title"] and "SECRET" not in meta["title"]
    assert got["outsider"] == "200:"
    # The same server, at the same moment, from a process that does not know the prefix.
    assert outsider.seen == {
        "/": 404,
        "/page.html": 404,
        "/private/notes.txt": 404,
        "/.env": 404,
        "/assets/style.css": 404,
    }
    path = urlsplit(meta["url"]).path
    assert path.endswith("/page.html") and len(path.split("/")[1]) >= 30  # the prefix


def test_a_page_inside_a_dot_directory_reads_no_sibling(tmp_path: Path) -> None:
    drafts = tmp_path / "project" / ".drafts"
    (drafts / "keys").mkdir(parents=True)
    (drafts / "id_rsa").write_text("-----BEGIN KEY-----")
    (drafts / "keys" / "deploy.pem").write_text("-----BEGIN KEY-----")
    (drafts / "page.html").write_text(DOT_PAGE)
    meta = _capture(drafts / "page.html", tmp_path / "dot.jpg")
    assert json.loads(meta["title"]) == {"sibling": "error", "nested": "error"}
