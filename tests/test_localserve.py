"""``shotctl capture FILE``'s server: the page and its assets, nothing else, sealed like file://.

Real HTTP over loopback with urllib; the folder holds what a developer's folder holds next to a
page: a ``.env``, a ``.git``, ``private/id_rsa``, a sibling folder outside, a symlink out, a hard
link to a file outside. Requests carry the ``Sec-Fetch-Dest`` a browser would send.
"""

from __future__ import annotations

import http.client
import os
import socket
import struct
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shotbridge.client.localserve import SANDBOX, LocalServer, Verdict, judge, resolve_inside


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


def get(url: str, method: str = "GET", dest: str | None = None) -> tuple[int, bytes]:
    return fetch(url, method, dest)[:2]  # type: ignore[return-value]


def fetch(url: str, method: str = "GET", dest: str | None = None) -> tuple[int, bytes, dict]:
    headers = {"Sec-Fetch-Dest": dest} if dest else {}
    try:
        req = urllib.request.Request(url, method=method, headers=headers)
        with urllib.request.urlopen(req) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


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
    last = server.prefix[-2]  # the prefix ends with "/": change the character before it
    wrong = server.prefix[:-2] + ("y" if last == "x" else "x") + "/"
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


# ---- sealed like file:// ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dest", "is_page", "kind", "verdict"),
    [
        # The page itself, as a document; no other document, frame or plug-in.
        ("document", True, "text/html", Verdict(serve=True)),
        ("document", False, "text/html", Verdict(serve=False)),
        ("iframe", True, "text/html", Verdict(serve=False)),
        ("iframe", False, "text/plain", Verdict(serve=False)),
        ("frame", False, "text/html", Verdict(serve=False)),
        ("object", False, "text/plain", Verdict(serve=False)),
        ("embed", False, "application/pdf", Verdict(serve=False)),
        # fetch/XHR/beacon, JSON module imports, workers: reads, not loads.
        ("empty", False, "text/plain", Verdict(serve=False)),
        ("empty", False, "text/javascript", Verdict(serve=False)),
        ("json", False, "application/json", Verdict(serve=False)),
        ("worker", False, "text/javascript", Verdict(serve=False)),
        ("serviceworker", False, "text/javascript", Verdict(serve=False)),
        ("xslt", False, "application/xml", Verdict(serve=False)),
        # What a page loads to render itself; CORS only for a file of the matching kind.
        ("script", False, "text/javascript", Verdict(serve=True, cors=True)),
        ("script", False, "text/plain", Verdict(serve=True)),
        ("style", False, "text/css", Verdict(serve=True, cors=True)),
        ("style", False, "text/plain", Verdict(serve=True)),
        ("font", False, "font/woff2", Verdict(serve=True, cors=True)),
        ("font", False, "text/plain", Verdict(serve=True)),
        ("image", False, "image/png", Verdict(serve=True)),  # never CORS: a canvas could read it
        ("video", False, "video/mp4", Verdict(serve=True)),
        # Not a browser (no Sec-Fetch-Dest): the bytes, no grant to any page.
        (None, False, "text/plain", Verdict(serve=True)),
        (None, True, "text/html", Verdict(serve=True)),
    ],
)
def test_judge_table(dest: str | None, is_page: bool, kind: str, verdict: Verdict) -> None:
    assert judge(dest, is_page, kind) == verdict


def test_every_answer_is_sandboxed_and_nosniff(served: tuple[str, LocalServer]) -> None:
    url, server = served
    base = server.origin + server.prefix
    for target, dest in ((url, "document"), (base + "assets/app.js", "script"),
                         (base + "private/id_rsa", "empty"), (base + ".env", None)):  # fmt: skip
        _, _, headers = fetch(target, dest=dest)
        assert headers["Content-Security-Policy"] == SANDBOX, target
        assert "allow-same-origin" not in SANDBOX
        assert headers["X-Content-Type-Options"] == "nosniff"


def test_reads_are_refused_loads_are_served(served: tuple[str, LocalServer]) -> None:
    url, server = served
    base = server.origin + server.prefix
    assert get(url, dest="document")[0] == 200
    assert get(url, dest="iframe")[0] == 404
    for dest in ("empty", "iframe", "object", "embed", "document", "json"):
        assert get(base + "private/id_rsa", dest=dest)[0] == 404, dest
        assert get(base + "assets/app.js", dest=dest)[0] == 404, dest
    status, body, headers = fetch(base + "assets/app.js", dest="script")
    assert (status, body) == (200, b"console.log(1)")
    assert headers["Access-Control-Allow-Origin"] == "null"
    assert headers["Content-Type"] == "text/javascript"
    status, _, headers = fetch(base + "private/id_rsa", dest="script")
    assert status == 200 and "Access-Control-Allow-Origin" not in headers
    assert headers["Content-Type"] == "application/octet-stream"  # nosniff: never runs


def test_hard_links_are_refused(site: Path, tmp_path: Path) -> None:
    """A second name may sit anywhere (``~/.ssh/id_rsa``): a file with two is not served."""
    os.link(tmp_path / "secret.txt", site / "private" / "key.txt")
    (site / "assets" / "twin.js").write_text("1")
    os.link(site / "assets" / "twin.js", site / "assets" / "twin2.js")  # both inside: still no
    (site / "keylink.txt").symlink_to(site / "private" / "key.txt")
    root = site.resolve()
    for rel in ("private/key.txt", "assets/twin.js", "assets/twin2.js", "keylink.txt"):
        assert resolve_inside(root, rel) is None, rel
    with LocalServer(site / "page.html") as url:
        base = url.rsplit("/", 1)[0] + "/"
        assert get(base + "private/key.txt", dest="script")[0] == 404


def test_a_page_in_a_dot_directory_gets_itself_only(tmp_path: Path) -> None:
    drafts = tmp_path / "work" / ".drafts"
    (drafts / "keys").mkdir(parents=True)
    (drafts / "page.html").write_text("<title>draft</title>")
    (drafts / "id_rsa").write_text("KEY")
    (drafts / "keys" / "deploy.pem").write_text("KEY")
    with LocalServer(drafts / "page.html") as url:
        base = url.rsplit("/", 1)[0] + "/"
        assert get(url, dest="document") == (200, b"<title>draft</title>")
        for rel in ("id_rsa", "keys/deploy.pem"):
            for dest in ("script", "image", "empty", None):
                assert get(base + rel, dest=dest)[0] == 404, (rel, dest)


def test_a_symlink_is_judged_by_the_file_it_reaches(site: Path, tmp_path: Path) -> None:
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("KEY")
    (site / "assets" / "fine.js").symlink_to(site / "assets" / "app.js")
    (site / "into_dot").symlink_to(tmp_path / ".ssh" / "id_rsa")
    (site / "into_git").symlink_to(site / ".git" / "config")
    (site / "dir_link").symlink_to(site / ".git", target_is_directory=True)
    root = site.resolve()
    assert resolve_inside(root, "assets/fine.js") == root / "assets" / "app.js"
    for rel in ("into_dot", "into_git", "dir_link/config"):
        assert resolve_inside(root, rel) is None, rel


@given(
    st.lists(
        st.sampled_from(["assets", "private", ".git", ".env", "..", ".", "app.js", "id_rsa",
                         "config", "%2e%2e", "%2E", "out", "dotlink.txt", "x\\y", "a\0b"]),
        min_size=0, max_size=5,
    )
)  # fmt: skip
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_resolve_inside_never_leaves_the_folder_or_enters_a_dot_dir(
    site: Path, segments: list[str]
) -> None:
    root = site.resolve()
    found = resolve_inside(root, "/".join(segments))
    if found is not None:
        assert found.is_relative_to(root) and found.is_file()
        assert not any(p.startswith(".") for p in found.parts)
        assert found.stat().st_nlink == 1


def test_a_client_that_leaves_mid_transfer_prints_no_traceback(
    site: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # A browser navigating away mid-load closes its socket; the user's terminal stays quiet.
    (site / "assets" / "big.js").write_bytes(b"/*" + b"x" * 8_000_000 + b"*/")
    with LocalServer(site / "page.html") as url:
        parts = urlsplit(url.rsplit("/", 1)[0] + "/assets/big.js")
        with socket.create_connection((parts.hostname or "", parts.port or 0)) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.sendall(
                f"GET {parts.path} HTTP/1.1\r\nHost: x\r\nSec-Fetch-Dest: script\r\n\r\n".encode()
            )
            assert sock.recv(64).startswith(b"HTTP/1.0 200")
        # The server keeps serving after the reset, and said nothing about it.
        assert get(url, dest="document")[0] == 200
    assert "Traceback" not in capfd.readouterr().err
