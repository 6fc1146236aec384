"""``shotctl capture FILE``'s server: the page and its assets, nothing else (issue 9, defect 4).

Real HTTP over loopback with urllib; the folder holds what a developer's folder holds next to a
page: a ``.env``, a ``.git``, ``private/id_rsa``, a sibling folder outside, a symlink out.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from shotbridge.localserve import LocalServer, resolve_inside


@pytest.fixture
def site(tmp_path: Path) -> Path:
    (tmp_path / "secret.txt").write_text("outside the page's folder")
    root = tmp_path / "site"
    (root / "assets").mkdir(parents=True)
    (root / "private").mkdir()
    (root / ".git").mkdir()
    (root / "page.html").write_text("<!doctype html><title>page</title>")
    (root / "index.html").write_text("<title>index</title>")
    (root / "assets" / "app.js").write_text("console.log(1)")
    (root / ".env").write_text("API_KEY=sk_live_1")
    (root / ".git" / "config").write_text("[core]")
    (root / "private" / ".id_rsa").write_text("-----BEGIN KEY-----")
    (root / "private" / "id_rsa").write_text("-----BEGIN KEY-----")
    (root / "out").symlink_to(tmp_path / "secret.txt")
    (root / "dotlink.txt").symlink_to(root / ".env")
    return root


@pytest.fixture
def served(site: Path) -> Iterator[tuple[str, LocalServer]]:
    server = LocalServer(site / "page.html")
    with server as url:
        yield url, server


def get(url: str, method: str = "GET") -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method)) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def raw_get(url: str, raw_path: str) -> int:
    """A request with the path sent exactly as written (urllib would normalise ``..``)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port)
    try:
        conn.request("GET", raw_path)
        return conn.getresponse().status
    finally:
        conn.close()


def test_the_page_and_its_assets_are_served(served: tuple[str, LocalServer]) -> None:
    url, server = served
    assert get(url) == (200, b"<!doctype html><title>page</title>")
    base = server.origin + server.prefix
    assert get(base + "assets/app.js") == (200, b"console.log(1)")
    status, body = get(url, method="HEAD")
    assert status == 200 and body == b""


def test_the_url_has_an_unguessable_prefix(site: Path) -> None:
    a, b = LocalServer(site / "page.html"), LocalServer(site / "page.html")
    assert a.prefix != b.prefix and len(a.prefix) >= 30
    with a as url:
        assert url == f"{a.origin}{a.prefix}page.html"


def test_nothing_without_the_prefix(served: tuple[str, LocalServer]) -> None:
    """Another local process sees the port, not the prefix: it gets nothing, not even the page."""
    _, server = served
    for path in ("/", "/page.html", "/private/id_rsa", "/assets/app.js", "/.env"):
        assert get(server.origin + path) == (404, b""), path
    wrong = server.prefix[:-2] + "x/"
    assert get(server.origin + wrong + "page.html")[0] == 404


def test_no_directory_listings(served: tuple[str, LocalServer]) -> None:
    _, server = served
    base = server.origin + server.prefix
    for path in ("", "assets/", "assets", "private/"):
        assert get(base + path) == (404, b""), path


def test_no_dotfiles_anywhere_in_the_path(served: tuple[str, LocalServer]) -> None:
    _, server = served
    base = server.origin + server.prefix
    for path in (".env", ".git/config", "private/.id_rsa", "%2Eenv", "assets/%2E%2E/.env"):
        assert get(base + path)[0] == 404, path
    assert get(base + "dotlink.txt")[0] == 404  # a symlink to a dotfile inside the folder


def test_no_escape_from_the_folder(served: tuple[str, LocalServer]) -> None:
    url, server = served
    for raw in ("../secret.txt", "assets/../../secret.txt", "%2E%2E/secret.txt", "..%2Fsecret.txt"):
        assert raw_get(url, server.prefix + raw) == 404, raw
    assert raw_get(url, "/../secret.txt") == 404
    assert get(server.origin + server.prefix + "out")[0] == 404  # symlink out of the folder


def test_private_subfolder_files_are_assets(served: tuple[str, LocalServer]) -> None:
    """A dot-less file beneath the folder is an asset the page may load (only under the prefix)."""
    _, server = served
    assert get(server.origin + server.prefix + "private/id_rsa")[0] == 200
    assert get(server.origin + "/private/id_rsa")[0] == 404


def test_only_get_and_head(served: tuple[str, LocalServer]) -> None:
    url, _ = served
    for method in ("POST", "PUT", "DELETE", "OPTIONS"):
        assert get(url, method=method)[0] == 405, method


def test_loopback_only_and_gone_after_the_capture(site: Path) -> None:
    server = LocalServer(site / "page.html")
    with server as url:
        assert urlsplit(url).hostname == "127.0.0.1"
        assert get(url)[0] == 200
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=5)


def test_a_folder_is_served_through_its_index(site: Path) -> None:
    with LocalServer(site) as url:
        assert url.endswith("/index.html")
        assert get(url) == (200, b"<title>index</title>")


def test_a_dotfile_page_the_user_chose_is_still_served(site: Path) -> None:
    (site / ".draft.html").write_text("<title>draft</title>")
    with LocalServer(site / ".draft.html") as url:
        assert get(url) == (200, b"<title>draft</title>")


def test_resolve_inside_rules(site: Path) -> None:
    root = site.resolve()
    assert resolve_inside(root, "assets/app.js") == root / "assets" / "app.js"
    for bad in ("", "assets", ".env", "a/../.env", "../secret.txt", "x\0y", "out", "missing"):
        assert resolve_inside(root, bad) is None, bad
