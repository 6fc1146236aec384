"""``shotctl capture FILE`` in real Chromium: the page gets its assets, nothing else (issue 9, #4).

The captured page tries what the review's page did: read ``../secret.txt``, ``.env``,
``private/.id_rsa`` and the folder listings, with synchronous XHRs so the answers are in its title
before the load event (and so in the capture). While the page waits on a request to the test's own
server, the test plays "another local process": it asks the capture's server for the same files
without the URL prefix.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

PAGE = """<!doctype html>
<title>loading</title>
<p id="out">?</p>
<script>
function status(path) {
  const xhr = new XMLHttpRequest();
  try {
    xhr.open('GET', path, false);  // synchronous: the answer is in before the load event
    xhr.send();
    return xhr.status;
  } catch (e) {
    return 'error';
  }
}
const origin = location.origin;
const got = {
  asset: status('assets/ok.txt'),
  parent: status('../secret.txt'),
  parent_encoded: status('%2e%2e/secret.txt'),
  env: status('.env'),
  dot_key: status('private/.id_rsa'),
  listing: status('./'),
  root_listing: status(origin + '/'),
  root_env: status(origin + '/.env'),
};
// Ask the test to probe the server from outside the browser while this page is still loading.
got.outsider = status('REPORT?origin=' + encodeURIComponent(origin)) === 200 ? 'asked' : 'no';
document.getElementById('out').textContent = JSON.stringify(got);
document.title = JSON.stringify(got);
</script>
"""


class _Outsider(BaseHTTPRequestHandler):
    """The test's server: on /report, fetch the capture server's files without the prefix."""

    def __init__(self, seen: dict[str, int | str], *args: object) -> None:
        self.seen = seen
        super().__init__(*args)  # type: ignore[arg-type]

    def do_GET(self) -> None:
        origin = parse_qs(urlsplit(self.path).query).get("origin", [""])[0]
        for path in ("/", "/page.html", "/private/id_rsa", "/.env", "/assets/ok.txt"):
            self.seen[path] = _status(origin + path)
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
def outsider() -> Iterator[tuple[str, dict[str, int | str]]]:
    seen: dict[str, int | str] = {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Outsider, seen))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/report", seen
    server.shutdown()
    server.server_close()


def test_file_capture_serves_only_the_page_and_its_assets(
    tmp_path: Path, outsider: tuple[str, dict[str, int | str]]
) -> None:
    report_url, seen = outsider
    (tmp_path / "secret.txt").write_text("outside")
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "private").mkdir()
    (site / "assets" / "ok.txt").write_text("fine")
    (site / ".env").write_text("API_KEY=sk_live_1")
    (site / "private" / ".id_rsa").write_text("KEY")
    (site / "private" / "id_rsa").write_text("KEY")
    (site / "page.html").write_text(PAGE.replace("REPORT", report_url))
    out = tmp_path / "shot.jpg"

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "shotbridge",
            "capture",
            str(site / "page.html"),
            "--browser",
            "headless",
            "-o",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(proc.stdout)
    got = json.loads(meta["title"])
    assert got == {
        "asset": 200,
        "parent": 404,
        "parent_encoded": 404,
        "env": 404,
        "dot_key": 404,
        "listing": 404,
        "root_listing": 404,
        "root_env": 404,
        "outsider": "asked",
    }
    # The same server, at the same moment, from a process that does not know the prefix.
    assert seen == {
        "/": 404,
        "/page.html": 404,
        "/private/id_rsa": 404,
        "/.env": 404,
        "/assets/ok.txt": 404,
    }
    path = urlsplit(meta["url"]).path
    assert path.endswith("/page.html") and len(path.split("/")[1]) >= 30  # the prefix
