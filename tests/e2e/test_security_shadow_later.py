"""Closed shadow roots that arrive after the first capture are masked, in real Chromium.

page/shadow-roots.js keeps a document's shadow roots between captures instead of asking Chrome
about every element at each one. These steps are the ways a root can appear that a cache could
miss: this realm's or another same-origin realm's ``attachShadow`` (an iframe's, removed at
once, or a popup's, closed at once) on an element the first
capture saw bare (no mutation fires), a closed root inside a closed root, a declarative root
parsed into an element already there, and a host given its root while detached and inserted
later. Each step shows one more green password; any green pixel in an image is a leak.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from shotbridge.client.bus_client import BusClient

from .conftest import HeadlessBrowser
from .test_security_capture import green_pixels
from .test_security_reveal import _title

pytestmark = pytest.mark.browser

# Passwords on screen after each step of tests/pages/security/later/roots.html.
VISIBLE = [0, 1, 2, 3, 3, 4, 5, 5, 6]


async def _steps(browser: HeadlessBrowser, url: str) -> list[dict[str, Any]]:
    shots = []
    async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
        await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
        for step in range(len(VISIBLE)):
            if step:
                await c.request("interact", {"action": "click", "selector": "#next"}, timeout=30)
            deadline = time.monotonic() + 15
            while (title := await _title(c)) != f"step {step}":
                assert time.monotonic() < deadline, f"step {step} never came (title {title!r})"
                await asyncio.sleep(0.05)
            shots.append(await c.request("screenshot", {"timeout_ms": 10_000}, timeout=30))
    return shots


def test_closed_roots_made_after_the_first_capture_are_masked(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    shots = asyncio.run(_steps(browser, f"{pages_url}/security/later/roots.html"))
    got = [(green_pixels(s["jpeg"]), s["masked"]) for s in shots]
    assert all(leak == 0 for leak, _ in got), got
    assert [masked for _, masked in got] == VISIBLE, got
