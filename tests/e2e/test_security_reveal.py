"""A password shown as text before the first capture is still masked, in real Chromium.

Every page here reveals its password (a component kit's own eye button, or a script switching
``type=password`` to ``text``) while it loads, before anything of ours has looked at it: in the
top document, a same-origin iframe, a srcdoc iframe, an about:blank frame the page writes into,
an open and a closed shadow root, and a Shoelace ``<sl-input type=password password-toggle>``
(installed from npm by tests/e2e/package.json, served from node_modules: no CDN). The secret is
pure green on a dark page, so any green pixel in the host's output image is a leak.

Before: the "once secret, always secret" memory only started at the first capture outside the top
document's light DOM, and a component host saying ``type="password"`` was no secret: these first
captures showed the password with "masked: 0".
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient

from .conftest import PAGES, _Handler
from .test_security_capture import green_pixels

pytestmark = pytest.mark.browser

SHOELACE = Path(__file__).resolve().parent / "node_modules/@shoelace-style/shoelace/cdn"
VENDOR = "/vendor/shoelace/"


class _Site(_Handler):
    """tests/pages, plus the npm copy of Shoelace under /vendor/shoelace/."""

    def translate_path(self, path: str) -> str:
        if path.startswith(VENDOR):
            rel = path[len(VENDOR) :].split("?", 1)[0]
            target = (SHOELACE / rel).resolve()
            return str(target) if target.is_relative_to(SHOELACE.resolve()) else ""
        return super().translate_path(path)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    assert (SHOELACE / "components/input/input.js").is_file(), "run npm install in tests/e2e"
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Site, directory=str(PAGES)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/security/reveal"
    server.shutdown()
    server.server_close()


async def _title(c: BusClient) -> str:
    tabs = (await c.request("list_tabs", {}, timeout=10))["tabs"]
    return next((t.get("title") or "" for t in tabs if t.get("active")), "")


async def first_capture(browser: HeadlessBrowser, url: str, **args: Any) -> dict[str, Any]:
    """Load ``url``, wait (from outside the page) until it says it revealed its password, then
    take the document's first screenshot."""
    async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
        await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
        deadline = time.monotonic() + 15
        while (title := await _title(c)) != "revealed":
            assert time.monotonic() < deadline, f"{url}: the page never revealed (title {title!r})"
            await asyncio.sleep(0.1)
        return await c.request("screenshot", {"timeout_ms": 10_000, **args}, timeout=30)


CASES = {
    "component kit (Shoelace sl-input, eye button)": "shoelace.html",
    "same-origin iframe": "frame.html",
    "srcdoc iframe": "srcdoc.html",
    "about:blank iframe": "blank.html",
    "open shadow root": "shadow.html?mode=open",
    "closed shadow root": "shadow.html?mode=closed",
    "server-rendered value": "preset.html",
}


@pytest.mark.parametrize("page", CASES.values(), ids=list(CASES))
def test_a_password_revealed_before_the_first_capture_is_masked(
    browser: HeadlessBrowser, site: str, page: str
) -> None:
    shot = asyncio.run(first_capture(browser, f"{site}/{page}"))
    leaked, masked = green_pixels(shot["jpeg"]), shot["masked"]
    assert leaked == 0 and masked >= 1, f"{page}: {leaked} green px, masked {masked}"


def test_a_revealed_preset_value_is_masked_in_a_full_page_image(
    browser: HeadlessBrowser, site: str
) -> None:
    shot = asyncio.run(first_capture(browser, f"{site}/preset.html", full_page=True))
    assert green_pixels(shot["jpeg"]) == 0 and shot["masked"] >= 1, shot["masked"]


def test_typing_into_a_revealed_kit_password_is_recorded_as_a_secret(
    browser: HeadlessBrowser, site: str
) -> None:
    typed = "TypedKit55"

    async def run() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        shot = await first_capture(browser, f"{site}/shoelace.html")
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            act = {"action": "type", "selector": "#pw >>> input", "text": typed}
            done = await c.request("interact", act, timeout=30)
            deadline = time.monotonic() + 15  # the recorder writes a fill once typing pauses
            while True:
                timeline = await c.request("timeline", {}, timeout=10)
                if any(e.get("kind") == "fill" for e in timeline["entries"]):
                    return shot, done, timeline
                assert time.monotonic() < deadline, timeline["entries"]
                await asyncio.sleep(0.2)

    shot, done, timeline = asyncio.run(run())
    assert green_pixels(shot["jpeg"]) == 0
    fills = [e for e in timeline["entries"] if e.get("kind") == "fill"]
    assert fills and fills[-1]["secret"] and fills[-1]["value"] == "<redacted>", fills
    assert typed not in json.dumps([done, timeline])
