"""Fixtures for end-to-end tests: real headless Chromium, the real extension, the real host.

Nothing here is a stand-in: Chromium launches the host through the native-messaging manifest in a
throwaway profile, and tests talk to that host over the real bus.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar

import pytest
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient

PAGES = Path(__file__).resolve().parents[1] / "pages"


STREAM_HEAD = (
    b"<!doctype html><html><head><meta charset=utf-8><title>Still streaming</title></head><body>"
    b"<h1>Order status</h1><form><label>Order number <input id=order name=order></label>"
    b"<button type=button id=track>Track order</button></form>"
    b'<a href="/annot/login.html" id=help>Help</a>\n'
)


class _Handler(SimpleHTTPRequestHandler):
    """Static pages, plus /slow?ms=N which answers after N ms (to catch a request mid-flight),
    and /stream: the start of an HTML page whose body never ends (readyState stays "loading")."""

    def _stream(self) -> None:
        # A byte every 0.2 s keeps the parser waiting; stop when the tab goes away or after 60 s.
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        try:
            self.wfile.write(STREAM_HEAD + b" " * 2048)  # past any sniffing buffer
            self.wfile.flush()
            for _ in range(300):
                time.sleep(0.2)
                self.wfile.write(b" ")
                self.wfile.flush()
        except OSError:
            pass  # the browser closed the connection
        self.close_connection = True

    def do_GET(self) -> None:
        if self.path.startswith("/stream"):
            self._stream()
            return
        if self.path.startswith("/slow"):
            ms = int(self.path.partition("ms=")[2] or "3000")
            time.sleep(ms / 1000)
            body = b"<!doctype html><title>slow</title><button>late</button>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def pages_url() -> Iterator[str]:
    """Base URL of tests/pages served on 127.0.0.1."""
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(PAGES))
    )
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def start_browser(**kwargs: object) -> HeadlessBrowser:
    from shotbridge.client.bus_client import wait_for_host

    browser = HeadlessBrowser(**kwargs).start()  # type: ignore[arg-type]
    try:
        asyncio.run(wait_for_host(runtime_dir=browser.runtime_dir, timeout=30, connected=True))
    except BaseException:
        print(browser.tail_log(40))
        browser.close()
        raise
    return browser


T = TypeVar("T")


def run_on_bus(
    browser: HeadlessBrowser,
    make: Callable[[BusClient], T],
    scenario: Callable[[T], Awaitable[None]],
) -> None:
    """Run ``scenario(make(client))`` on one bus connection to ``browser``'s host."""

    async def main() -> None:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as client:
            await scenario(make(client))

    asyncio.run(main())


@pytest.fixture(scope="module")
def browser() -> Iterator[HeadlessBrowser]:
    """A 1920×1080 headless Chromium at devicePixelRatio 1 with the extension connected."""
    b = start_browser(window_size=(1920, 1080))
    yield b
    b.close()


@pytest.fixture(scope="module")
def browser_dpr2() -> Iterator[HeadlessBrowser]:
    b = start_browser(window_size=(1280, 800), device_scale_factor=2)
    yield b
    b.close()


# ---- headed: a Chromium with a window under Xvfb, set up as README says (tests/e2e/headed.py) ----


@pytest.fixture(scope="session")
def xvfb() -> Iterator[object]:
    """One X display for every headed test of the run."""
    from tests.e2e.headed import Xvfb

    server = Xvfb().start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def desktop(xvfb: object) -> Iterator[object]:
    """A fresh user session (HOME, XDG_RUNTIME_DIR, DISPLAY) for one test module."""
    from tests.e2e.headed import Desktop

    session = Desktop(xvfb)  # type: ignore[arg-type]
    yield session
    session.close()


@pytest.fixture(scope="module")
def headed(desktop: object, pages_url: str) -> Iterator[object]:
    """A headed Chromium with its own profile, registered by `shotctl install --user-data-dir`,
    the extension loaded with --load-extension; connected to its host when the test starts."""
    from tests.e2e.headed import HeadedChromium

    profile = desktop.root / "profile"  # type: ignore[attr-defined]
    done = desktop.run("shotctl", "install", "--user-data-dir", str(profile))  # type: ignore[attr-defined]
    assert done.returncode == 0, done.stderr
    browser = HeadedChromium(desktop, profile, start_url=f"{pages_url}/buttons.html")  # type: ignore[arg-type]
    browser.start()
    try:
        desktop.wait_hosts(1)  # type: ignore[attr-defined]
    except BaseException:
        print(browser.tail_log())
        browser.close()
        raise
    yield browser
    browser.close()
